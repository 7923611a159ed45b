import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, toolSourcesConfig } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'mcp-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
/** Writes a config file and returns its path. */
const file = (yaml: string): string => {
  const p = join(dir, `mcp-${++files}.yaml`);
  writeFileSync(p, yaml);
  return p;
};

function refusal(yaml: string, env: Record<string, string> = {}): string {
  let err: unknown;
  try {
    toolSourcesConfig({ ...env, MCP_CONFIG_PATH: file(yaml) });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).variable).toBe('MCP_CONFIG_PATH');
  return (err as ConfigError).message;
}

describe('toolSources config', () => {
  it('has the documented defaults, and the shipped config/mcp.yaml enables no server', () => {
    const c = loadConfig({}).toolSources;
    expect(c).toEqual({
      mcp: { configPath: './config/mcp.yaml', timeoutMs: 60_000, rateLimitPerMinute: 60, servers: [] },
      maxPerUser: 20,
      openapi: { maxSpecBytes: 2 * 1024 * 1024, timeoutMs: 30_000 },
    });
  });

  it('reads the variables, refusing bad values by name', () => {
    const c = toolSourcesConfig({
      MCP_TOOL_TIMEOUT_SECONDS: '5',
      MCP_TOOL_RATE_LIMIT: '0',
      TOOL_SOURCES_MAX_PER_USER: '3',
      OPENAPI_MAX_SPEC_BYTES: '4096',
      OPENAPI_TOOL_TIMEOUT_SECONDS: '7',
      MCP_CONFIG_PATH: file(''),
    });
    expect(c).toMatchObject({ mcp: { timeoutMs: 5000, rateLimitPerMinute: 0, servers: [] }, maxPerUser: 3, openapi: { maxSpecBytes: 4096, timeoutMs: 7000 } });
    for (const [name, value] of [
      ['MCP_TOOL_TIMEOUT_SECONDS', '0'],
      ['MCP_TOOL_RATE_LIMIT', '-1'],
      ['TOOL_SOURCES_MAX_PER_USER', '2.5'],
      ['OPENAPI_MAX_SPEC_BYTES', 'big'],
      ['OPENAPI_TOOL_TIMEOUT_SECONDS', '99999'],
    ]) {
      expect(() => toolSourcesConfig({ [name]: value }), name).toThrow(new RegExp(`^invalid configuration: ${name}: `));
    }
  });

  it('parses HTTP and stdio servers, expanding ${VAR} from the environment', () => {
    const path = file(`
servers:
  github:
    url: https://mcp.example.com/mcp
    headers: { Authorization: "Bearer \${GH_TOKEN}", X-Team: core }
    timeout_seconds: 15
  files_1:
    command: node
    args: ["server.mjs", "--root=\${ROOT}"]
    env: { FOO: bar }
    cwd: /srv
    rate_limit_per_minute: 0
`);
    const c = toolSourcesConfig({ MCP_CONFIG_PATH: path, GH_TOKEN: 'secret-1', ROOT: '/data', MCP_TOOL_RATE_LIMIT: '30' });
    expect(c.mcp.servers).toEqual([
      {
        name: 'github',
        transport: { kind: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer secret-1', 'X-Team': 'core' } },
        timeoutMs: 15_000,
        rateLimitPerMinute: 30,
      },
      {
        name: 'files_1',
        transport: { kind: 'stdio', command: 'node', args: ['server.mjs', '--root=/data'], env: { FOO: 'bar' }, cwd: '/srv' },
        timeoutMs: 60_000,
        rateLimitPerMinute: 0,
      },
    ]);
  });

  it('fails start-up naming a variable the file uses that is not set', () => {
    const msg = refusal('servers:\n  gh:\n    url: https://x.example/mcp\n    headers: { Authorization: "Bearer ${NOPE_TOKEN}" }\n', { OTHER: 'v' });
    expect(msg).toContain('servers.gh.headers.Authorization uses ${NOPE_TOKEN}, but NOPE_TOKEN is not set');
  });

  it('an absent default file is no servers; a named file must exist', () => {
    expect(toolSourcesConfig({ MCP_CONFIG_PATH: '' }).mcp.servers).toEqual([]);
    expect(() => toolSourcesConfig({ MCP_CONFIG_PATH: join(dir, 'missing.yaml') })).toThrow(/MCP_CONFIG_PATH: .*missing\.yaml: does not exist/);
  });

  it.each([
    ['servers:\n  gh:\n    urll: https://x.example/mcp\n', 'servers.gh needs exactly one of url (streamable HTTP) or command (stdio)'],
    ['servers:\n  gh:\n    url: https://x.example/mcp\n    urll: x\n', 'servers.gh.urll is not a setting'],
    ['servers:\n  gh:\n    url: https://x.example/mcp\n    command: node\n', 'servers.gh needs exactly one of url'],
    ['servers:\n  gh:\n    url: https://x.example/mcp\n    args: [a]\n', 'servers.gh.args is not a setting (known for http servers'],
    ['servers:\n  fs:\n    command: node\n    headers: {}\n', 'servers.fs.headers is not a setting (known for stdio servers'],
    ['servers:\n  "bad name":\n    url: https://x.example/mcp\n', 'servers.bad name: a server name is 1 to 40'],
    [`servers:\n  ${'a'.repeat(41)}:\n    url: https://x.example/mcp\n`, 'a server name is 1 to 40'],
    ['servers:\n  gh:\n    url: ftp://x.example/mcp\n', 'servers.gh.url must be an http(s) URL'],
    ['servers:\n  gh:\n    url: https://x.example/mcp\n    timeout_seconds: 0\n', 'servers.gh.timeout_seconds must be an integer from 1 to 3600'],
    ['servers:\n  gh:\n    url: https://x.example/mcp\n    rate_limit_per_minute: -1\n', 'servers.gh.rate_limit_per_minute must be an integer'],
    ['servers:\n  gh:\n    url: https://x.example/mcp\n    headers: { X-Num: 5 }\n', 'servers.gh.headers.X-Num must be a string'],
    ['servers:\n  gh:\n    url: https://x.example/mcp\n    headers: { "Bad Header": x }\n', 'servers.gh.headers.Bad Header is not a valid name'],
    ['servers:\n  fs:\n    command: node\n    args: node\n', 'servers.fs.args must be a list of strings'],
    ['servers:\n  fs:\n    command: ""\n', 'servers.fs.command must be a non-empty string'],
    ['servers:\n  fs:\n    command: node\n    env: [A]\n', 'servers.fs.env must be a mapping'],
    ['servers: [a, b]\n', 'servers must map server names'],
    ['server:\n  gh: {}\n', 'server is not a setting (known: servers)'],
    ['servers: {gh: [\n', 'not valid YAML'],
  ])('refuses %j', (yaml, expected) => {
    expect(refusal(yaml)).toContain(expected);
  });
});
