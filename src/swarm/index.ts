/**
 * Swarm: persistent agents that work one request in parallel across worker processes, led by
 * the workflow actor (workflows/swarm.ts).
 *
 * API (what the lead, the worker wiring and the gateway use):
 * - `Mailboxes` (mailbox.ts): `send(workflowId, to, mail, msgId)` stores a message in an
 *   actor's mailbox (stream MAILBOXES, subject `svc.actor.agent.<workflow_id>.<name>`,
 *   `LEAD` = "lead" for the lead) de-duplicated by `msgId`; `reader(workflowId, name,
 *   afterSeq)` reads one mailbox from after a recorded stream position (`Received.seq`);
 *   `purge(workflowId)` empties a swarm's mailboxes and its agents' starts still queued.
 * - `SwarmBoard` (board.ts): the task list (KV SWARM_TASKLISTS, compare-and-set `update`) and
 *   the workspace of results (KV SWARM_WORKSPACE, `post` by the lead, `entries`).
 * - `startAgentHost` (agent-host.ts): run by every worker process; takes `AgentStart`
 *   messages from the SWARM_AGENTS work queue (subject `svc.swarm.start.<workflow_id>.<name>`,
 *   `agentStartSubject`), one live actor per agent (lease `<workflow_id>.<name>` in LEASES),
 *   each with its own journal (`svc.journal.<workflow_id>.<name>`).
 * - `SwarmMessenger` (messenger.ts): a person's message to a running swarm's lead (owner only).
 *
 * Guarantees: no mailbox message is lost by a crash (stored before the sending step counts as
 * done) or acted on twice (de-duplicated by the sender's step; readers journal what they read
 * with its stream position); one gap-free seq per workflow, because agents never publish
 * events: they mail them to the lead, which emits them in its journaled steps.
 */
export { LEAD, Mailboxes, MailReader } from './mailbox.js';
export type { AgentReport, Mail, MailEvent, Received } from './mailbox.js';
export { SwarmBoard, SWARM_STATE_TTL_MS } from './board.js';
export type { SwarmState, SwarmTask, SwarmTaskStatus, WorkspaceEntry } from './board.js';
export { SwarmStopped, agentPrefix, workspaceSnippet, workspaceText } from './agent-run.js';
export type { AgentStart } from './agent-run.js';
export { startAgentHost } from './agent-host.js';
export type { AgentHostOptions } from './agent-host.js';
export { MAX_PERSON_MESSAGE_CHARS, SWARM_DISABLED, SWARM_NOT_FOUND, SwarmMessenger } from './messenger.js';
export type { UnplannedSwarm } from './messenger.js';
export { MAX_AGENT_MESSAGE_CHARS, SEND_MESSAGE_TOOL } from './send-tool.js';
export { agentStartSubject, recruitAgent } from './recruit.js';
