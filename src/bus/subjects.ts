/**
 * Every NATS subject, stream, consumer and bucket name is built here and nowhere else.
 * Tokens are validated: a token may not be empty or contain '.', '*', '>' or whitespace,
 * so a client-supplied id can never widen a subscription.
 */

const BAD_TOKEN = /[.*>\s]/;

/**
 * Task priorities, highest first: one work queue (stream) each, drained by every worker
 * (runtime/task-intake.ts). `normal` is the TASKS stream every task went to before priorities
 * existed, so with PRIORITY_QUEUES=off nothing moves.
 */
export const TASK_PRIORITIES = ['critical', 'high', 'normal', 'low'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

export function token(t: string, what = 'token'): string {
  if (!t || BAD_TOKEN.test(t) || t.length > 256) throw new Error(`invalid subject ${what}: ${JSON.stringify(t)}`);
  return t;
}

export const STREAMS = {
  /** WorkQueue: one message per task start (priority normal); claimed once by a worker. */
  tasks: 'TASKS',
  /** The work queues of the other priorities (PRIORITY_QUEUES=on), like TASKS: see taskStream. */
  tasksCritical: 'TASKS_CRITICAL',
  tasksHigh: 'TASKS_HIGH',
  tasksLow: 'TASKS_LOW',
  /** Per-workflow events, 24 h, deduplicated by (workflow, seq). */
  events: 'EVENTS',
  /**
   * Inbound channel messages accepted by a webhook, 24 h (limits), deduplicated by the platform's
   * event id: stored before the webhook answers, so nothing is lost if the gateway dies then.
   */
  channelInbox: 'CHANNEL_INBOX',
  /**
   * Outbound posts to chat platforms (daemon replies, agent results), WorkQueue: a post is
   * stored before the claim or task that produced it is let go, and removed once the platform
   * accepted it; deduplicated by what produced it (`reply:<message_id>`, `result:<workflow_id>`).
   */
  channelOutbox: 'CHANNEL_OUTBOX',
  /** The step journal of every workflow, a week: one subject per workflow (bus/journal.ts). */
  journal: 'JOURNAL',
  /**
   * Swarm mailboxes (limits, a day, deduplicated by the sender's step): one subject per agent of
   * a swarm, `svc.actor.agent.<workflow_id>.<name>` (the lead's name is `lead`); purged when the
   * swarm ends (swarm/mailbox.ts).
   */
  mailboxes: 'MAILBOXES',
  /** WorkQueue: one start message per swarm agent, taken by one worker process at a time (swarm/agent-host.ts). */
  swarmAgents: 'SWARM_AGENTS',
} as const;

export const CONSUMERS = {
  /** Durable pull consumer of each task work queue (TASKS and its priority siblings), shared by every worker process. */
  workers: 'workers',
  /** Durable pull consumer that copies events into Postgres. */
  archiver: 'archiver',
  /** Durable pull consumer of CHANNEL_INBOX shared by every gateway: offers messages to daemons. */
  channelRouter: 'channel-router',
  /** Durable pull consumer of CHANNEL_OUTBOX shared by every gateway: posts through the platforms' APIs. */
  channelSender: 'channel-sender',
  /** Durable pull consumer of SWARM_AGENTS shared by every worker process: runs swarm agents. */
  swarmAgents: 'swarm-agents',
} as const;

export const BUCKETS = {
  /** Idempotency-Key -> cached submit response, 24 h. */
  idempotency: 'IDEMPOTENCY',
  /** Durable control state (pause, cancel) per workflow: key <workflow_id>. */
  control: 'CONTROL',
  /** Rate-limit window counters shared by all gateways: key <limiter>.<principal>.<window>. */
  ratelimit: 'RATELIMIT',
  /** Scheduler leader lease: key `leader`. */
  scheduler: 'SCHEDULER',
  /** Workflow actor leases: key <workflow_id> -> the worker running it; expire after the ack wait. */
  leases: 'LEASES',
  /** LLM response cache shared by workers: entries e.<settings>.<request>, per-settings index i.<settings>; 24 h. */
  llmCache: 'LLM_CACHE',
  /** Daemon message claims: key <message_id> -> the claim (conn, channel, thread, ...); TTL = the claim TTL (the lease). */
  daemonClaims: 'DAEMON_CLAIMS',
  /**
   * Messages offered to daemons and not yet replied or routed: key <message_id>. One no daemon
   * claimed within the pending-message TTL (90 s) goes to the default agent route. Entries
   * leave explicitly; the bucket's day-long TTL only bounds a leak.
   */
  daemonPending: 'DAEMON_PENDING',
  /** Daemon replies to a waiting workflow: key <workflow_id>.<message_id> -> the reply; 24 h. */
  daemonSignals: 'DAEMON_SIGNALS',
  /** Channel messages run on the default agent route: key <message_id> -> the task and where its result goes. */
  channelTasks: 'CHANNEL_TASKS',
  /** Channel messages answered on the agent route: key <message_id>; 24 h (a redelivery does nothing). */
  channelTasksDone: 'CHANNEL_TASKS_DONE',
  /** Plan review state of a waiting research task: key <workflow_id>; each value carries its own expiry (review timeout + 5 min). */
  reviews: 'REVIEWS',
  /** The lock of a review's feedback model call: key <workflow_id>; the bucket's short TTL is the lock's lease. */
  reviewLocks: 'REVIEW_LOCKS',
  /** A swarm's shared state: key <workflow_id> -> owner, running or ended, task list; compare-and-set updates (swarm/board.ts). */
  swarmTasklists: 'SWARM_TASKLISTS',
  /** A swarm's shared workspace of agent results: key <workflow_id> -> the entries (cut to workspace_snippet_chars). */
  swarmWorkspace: 'SWARM_WORKSPACE',
  /** Object store of large tool outputs (screenshots over 500 KB), owner in each object's metadata; a week (bus/blobs.ts). */
  blobs: 'BLOBS',
} as const;

export const subjects = {
  /** Daemon dispatch to every connection of one owner (any gateway); the token is a hash of tenant and user. */
  daemonOwner: (ownerToken: string) => `svc.daemon.owner.${token(ownerToken, 'owner')}`,
  /** Status requests about one owner's daemons, answered by every gateway holding a connection of that owner (core NATS). */
  daemonStatus: (ownerToken: string) => `svc.daemon.status.${token(ownerToken, 'owner')}`,
  /** Thread affinity hints, to every gateway: "<owner hash>.<thread hash> <conn_id>" (core NATS, not stored). */
  daemonAffinity: 'svc.daemon.affinity',
  /** The subjects of one priority's work queue (`normal`: TASKS' subjects, as before priorities). */
  taskStartLevel: (p: TaskPriority) => (p === 'normal' ? 'svc.tasks.start.>' : `svc.tasks.${p}.>`),
  /** The start message of a workflow, in its priority's work queue. */
  taskStart: (workflowId: string, p: TaskPriority = 'normal') => `${p === 'normal' ? 'svc.tasks.start' : `svc.tasks.${p}`}.${token(workflowId, 'workflow id')}`,
  /** Every task start subject, of every priority (an idle worker listens here to know when to look again). */
  taskStartAny: 'svc.tasks.>',
  eventsAll: 'svc.events.>',
  journalAll: 'svc.journal.>',
  journal: (workflowId: string) => `svc.journal.${token(workflowId, 'workflow id')}`,
  events: (workflowId: string) => `svc.events.${token(workflowId, 'workflow id')}`,
  /** Mailbox of a live workflow actor (control nudges; durable state is in the CONTROL bucket). */
  workflowActor: (workflowId: string) => `svc.actor.workflow.${token(workflowId, 'workflow id')}`,
  agentActor: (workflowId: string, agent: string) => `svc.actor.agent.${token(workflowId, 'workflow id')}.${token(agent, 'agent name')}`,
  /** Every swarm mailbox (the MAILBOXES stream). */
  agentActorAll: 'svc.actor.agent.>',
  /** Every mailbox of one swarm (purge filter). */
  agentActorsOf: (workflowId: string) => `svc.actor.agent.${token(workflowId, 'workflow id')}.*`,
  /** The journal of one swarm agent (in JOURNAL, beside its workflow's `svc.journal.<workflow_id>`). */
  agentJournal: (workflowId: string, agent: string) => `svc.journal.${token(workflowId, 'workflow id')}.${token(agent, 'agent name')}`,
  swarmStartAll: 'svc.swarm.start.>',
  /** The start message of one swarm agent (SWARM_AGENTS work queue). */
  swarmStart: (workflowId: string, agent: string) => `svc.swarm.start.${token(workflowId, 'workflow id')}.${token(agent, 'agent name')}`,
  channelInboxAll: 'svc.channels.inbox.>',
  channelInbox: (channelId: string) => `svc.channels.inbox.${token(channelId, 'channel id')}`,
  channelOutboxAll: 'svc.channels.outbox.>',
  channelOutbox: (channelId: string) => `svc.channels.outbox.${token(channelId, 'channel id')}`,
  daemonActor: (connId: string) => `svc.actor.daemon.${token(connId, 'connection id')}`,
  /**
   * Core NATS (not stored): an owner's tool sources changed (registered, removed, an MCP
   * server's tool list); the payload is the owner (user id, or `anonymous`). Every process
   * drops what it cached of that owner's tools.
   */
  toolSourcesChanged: 'svc.toolsources.changed',
} as const;

export const kvKeys = {
  control: (workflowId: string) => token(workflowId, 'workflow id'),
  lease: (workflowId: string) => token(workflowId, 'workflow id'),
  /** A cached LLM response: both parts are hex digests (settings hash, request hash). */
  llmCacheEntry: (settingsHash: string, requestHash: string) => `e.${hexToken(settingsHash)}.${hexToken(requestHash)}`,
  /** The list of recent cached requests of one settings hash (for the similarity search). */
  llmCacheIndex: (settingsHash: string) => `i.${hexToken(settingsHash)}`,
  /** A daemon message's claim. */
  daemonClaim: (messageId: string) => token(messageId, 'message id'),
  daemonPending: (messageId: string) => token(messageId, 'message id'),
  daemonSignal: (workflowId: string, messageId: string) => `${token(workflowId, 'workflow id')}.${token(messageId, 'message id')}`,
  channelTask: (messageId: string) => token(messageId, 'message id'),
  review: (workflowId: string) => token(workflowId, 'workflow id'),
  /** The lease of one swarm agent (LEASES bucket, beside its workflow's `<workflow_id>`). */
  agentLease: (workflowId: string, agent: string) => `${token(workflowId, 'workflow id')}.${token(agent, 'agent name')}`,
  swarm: (workflowId: string) => token(workflowId, 'workflow id'),
} as const;

/** The work queue (stream) of a priority. */
export function taskStream(p: TaskPriority): string {
  return p === 'critical' ? STREAMS.tasksCritical : p === 'high' ? STREAMS.tasksHigh : p === 'low' ? STREAMS.tasksLow : STREAMS.tasks;
}

function hexToken(t: string): string {
  if (!/^[0-9a-f]{8,128}$/.test(t)) throw new Error(`invalid cache key part: ${JSON.stringify(t)}`);
  return t;
}
