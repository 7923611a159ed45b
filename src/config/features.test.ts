import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { SWARM_DEFAULTS, approvalPolicies, featureWarnings, loadFeatures, swarmLimits } from './features.js';
import { loadConfig } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'features-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('config/features.yaml', () => {
  it("the shipped file loads: no tool policies, the spec's swarm limits, nothing unread", () => {
    const c = loadConfig({});
    expect(c.features.approvals).toEqual({ tools: [], roles: {} });
    expect(c.features.swarm).toEqual(SWARM_DEFAULTS);
    expect(featureWarnings(c)).toEqual([]);
  });

  it('reads the swarm limits, SWARM_ENABLED overriding enabled', () => {
    const p = file('swarm.yaml', 'swarm:\n  enabled: true\n  max_agents: 3\n  workspace_snippet_chars: 50\n');
    const c = loadConfig({ CONFIG_PATH: p });
    expect(c.features.swarm).toEqual({ ...SWARM_DEFAULTS, max_agents: 3, workspace_snippet_chars: 50 });
    expect(loadConfig({ CONFIG_PATH: p, SWARM_ENABLED: 'false' }).features.swarm.enabled).toBe(false);
    expect(loadConfig({ SWARM_ENABLED: '0' }).features.swarm.enabled).toBe(false);
    expect(swarmLimits({ enabled: false }, { SWARM_ENABLED: '1' }).enabled).toBe(true);
    expect(() => loadConfig({ SWARM_ENABLED: 'maybe' })).toThrow(/SWARM_ENABLED/);
  });

  it.each([
    ['an unknown key', { max_agent: 3 }, /swarm.max_agent is not a setting/],
    ['a string', { max_agents: '3' }, /swarm.max_agents must be an integer from 1 to 100/],
    ['zero agents', { max_agents: 0 }, /swarm.max_agents must be an integer from 1 to 100/],
    ['a fraction', { max_total_tokens: 1.5 }, /swarm.max_total_tokens must be an integer/],
    ['enabled as a string', { enabled: 'yes' }, /swarm.enabled must be true or false/],
    ['a list', [1], /swarm must be a mapping/],
  ])('refuses a swarm section with %s', (_, v, msg) => {
    expect(() => swarmLimits(v)).toThrow(msg);
  });

  it('reads tool policies for every role and per role', () => {
    const p = file('ok.yaml', 'approvals:\n  tools: [bash]\n  roles:\n    developer: [file_write, python_executor]\n');
    expect(loadConfig({ CONFIG_PATH: p }).features.approvals).toEqual({ tools: ['bash'], roles: { developer: ['file_write', 'python_executor'] } });
  });

  it('names tools from elsewhere and prefixes of them; a pattern anywhere but the end is refused', () => {
    expect(approvalPolicies({ tools: ['mcp.github.create_issue', 'openapi.*'], roles: { developer: ['mcp.files.*'] } })).toEqual({
      tools: ['mcp.github.create_issue', 'openapi.*'],
      roles: { developer: ['mcp.files.*'] },
    });
    for (const bad of ['mcp.*.x', '*', 'mcp..x', 'mcp.github.']) expect(() => approvalPolicies({ tools: [bad] })).toThrow(/must be a list of tool names/);
  });

  it('a missing file at the default path means no policies; at a named path it fails start-up', () => {
    expect(loadFeatures(join(dir, 'absent.yaml'), false).approvals.tools).toEqual([]);
    expect(() => loadConfig({ CONFIG_PATH: join(dir, 'absent.yaml') })).toThrow(ConfigError);
  });

  it.each([
    ['tools: bash', 'approvals:\n  tools: bash\n', /approvals.tools must be a list/],
    ['roles as a list', 'approvals:\n  roles: [developer]\n', /approvals.roles must map/],
    ['an unknown key', 'approvals:\n  tool: [bash]\n', /approvals.tool is not a setting/],
    ['an unknown role', 'approvals:\n  roles:\n    develper: [bash]\n', /approvals.roles.develper: unknown role/],
    ['an unknown section', 'aproovals: {}\n', /unknown section/],
    ['bad YAML', 'approvals: [\n', /not valid YAML/],
  ])('refuses %s naming CONFIG_PATH', (_, text, msg) => {
    const p = file(`bad-${Math.random()}.yaml`, text);
    let err: unknown;
    try {
      loadConfig({ CONFIG_PATH: p });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('CONFIG_PATH');
    expect((err as Error).message).toMatch(msg);
  });

  it('an empty approvals section is no policy', () => {
    expect(approvalPolicies(null)).toEqual({ tools: [], roles: {} });
  });

  it('APPROVAL_TIMEOUT_SECONDS is an integer >= 1', () => {
    expect(loadConfig({ APPROVAL_TIMEOUT_SECONDS: '2' }).approvals.timeoutSeconds).toBe(2);
    expect(() => loadConfig({ APPROVAL_TIMEOUT_SECONDS: '0' })).toThrow(/APPROVAL_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ APPROVAL_TIMEOUT_SECONDS: '1.5' })).toThrow(/APPROVAL_TIMEOUT_SECONDS/);
  });
});
