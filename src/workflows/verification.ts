/**
 * The verification step (enable_verification): a model checks the answer; its verdict and
 * findings go into metadata. The answer itself is not changed, so the verifier's text is
 * never the final answer.
 */
import { modelTurn, type AgentOutput } from '../agents/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import { asOutput } from './usage.js';
import type { Prepared } from './workflow.js';

export async function verify(ctx: WorkflowContext, p: Prepared, answer: string): Promise<{ out: AgentOutput; info: Record<string, unknown> }> {
  const turn = await modelTurn(
    ctx,
    p.agent,
    { ...p.base, agentId: 'verifier' },
    'verify',
    [
      {
        role: 'system',
        content:
          'You verify answers. Check the answer against the request for factual errors, unsupported claims, omissions and contradictions. ' +
          'Respond with JSON: {"verdict": "pass" | "fail", "findings": ["..."]}.',
      },
      { role: 'user', content: `Request: ${p.t.query}\n\nAnswer to verify:\n${answer}` },
    ],
    undefined,
    { announce: true, emitOutput: false },
  );
  let verdict = 'unknown';
  let findings: string[] = [];
  try {
    const m = /\{[\s\S]*\}/.exec(turn.text);
    const parsed = m ? (JSON.parse(m[0]) as { verdict?: unknown; findings?: unknown }) : undefined;
    if (parsed && (parsed.verdict === 'pass' || parsed.verdict === 'fail')) verdict = parsed.verdict;
    if (parsed && Array.isArray(parsed.findings)) findings = parsed.findings.filter((f): f is string => typeof f === 'string');
  } catch {
    /* not JSON: the text is the finding */
  }
  if (!findings.length && verdict === 'unknown') findings = [turn.text];
  return { out: asOutput('verifier', 'verify', turn), info: { verdict, findings, model: turn.model, provider: turn.provider } };
}
