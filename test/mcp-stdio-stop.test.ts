/**
 * Nothing the service started outlives it: an operator's stdio MCP server (a child process the
 * service spawns at the first use of its tools) ends with the service, whether the service is
 * stopped (SIGTERM: it closes the connection) or killed (SIGKILL: the child reads the end of
 * its stdin and exits). The server script is copied into a folder of its own so its command
 * line names it.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { json, waitFor } from './helpers/app.js';
import { MCP_STDIO_SERVER } from './helpers/mcp-servers.js';
import { embeddedEnv, gatewayBase, startServiceProcess, testBusEnv, type ServiceProcess } from './helpers/process.js';
import { startTestNats, type TestNats } from './harness/nats.js';

const dir = mkdtempSync(join(tmpdir(), 'taskorch-mcp-stdio-'));
const started: ServiceProcess[] = [];
let nats: TestNats | undefined;

afterAll(async () => {
  for (const p of started) if (p.proc.exitCode === null) p.kill('SIGKILL');
  for (const pid of processesNaming(dir)) process.kill(pid, 'SIGKILL');
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Pids of live processes whose command line mentions `d`. */
function processesNaming(d: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(d)) found.push(Number(name));
    } catch {
      /* exited while listed */
    }
  }
  return found;
}

async function serviceWithStdioServer(tag: string): Promise<{ p: ServiceProcess; base: string; marker: string }> {
  const marker = join(dir, tag);
  const script = `${marker}.mjs`;
  copyFileSync(MCP_STDIO_SERVER, script);
  // The copy resolves the SDK from the repository's node_modules.
  try {
    symlinkSync(fileURLToPath(new URL('../node_modules', import.meta.url)), join(dir, 'node_modules'));
  } catch {
    /* made by the first service */
  }
  const yaml = join(dir, `${tag}.yaml`);
  writeFileSync(yaml, `servers:\n  local:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(script)}]\n`);
  nats ??= await startTestNats();
  const p = await startServiceProcess({ ...embeddedEnv(join(dir, `${tag}-data`)), ...testBusEnv(nats.url), MCP_CONFIG_PATH: yaml });
  started.push(p);
  const base = await gatewayBase(p);
  const r = await json(
    await fetch(`${base}/api/v1/tools/mcp.local.echo/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"arguments":{"text":"up"}}',
    }),
  );
  expect(r).toMatchObject({ success: true, text: 'up' });
  expect(processesNaming(marker).length).toBe(1);
  return { p, base, marker };
}

describe('an operator stdio MCP server', () => {
  it('ends when the service is stopped (SIGTERM)', async () => {
    const { p, marker } = await serviceWithStdioServer('term');
    p.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    await waitFor(async () => processesNaming(marker).length === 0, 5_000);
  }, 60_000);

  it('ends when the service is killed (SIGKILL): its stdin closes', async () => {
    const { p, marker } = await serviceWithStdioServer('kill');
    p.kill('SIGKILL');
    await p.exited;
    await waitFor(async () => processesNaming(marker).length === 0, 10_000);
  }, 60_000);
});
