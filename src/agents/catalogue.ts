/**
 * The agent catalogue: single-purpose agents read once at start-up from a folder of YAML
 * files (config/agents, AGENT_CATALOG_DIR; one `<id>.yaml` per agent, format in
 * catalogue-parse.ts). Each agent is a registered tool run with a validated input
 * (agent-input.ts) as one journaled step (the `agent` workflow).
 *
 * Guarantees: the first bad file fails start-up naming the file and the field; an agent whose
 * tool is not registered (or is dangerous) fails start-up naming the agent and the tool
 * (`checkTools`, called where the tool registry exists); an unknown id is a 404
 * `Agent not found: <id>`.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ConfigError } from '../config/index.js';
import { notFound } from '../kernel/index.js';
import { AgentFileError, parseAgentFile, type AgentDefinition } from './catalogue-parse.js';

export interface AgentCatalogue {
  readonly dir: string;
  /** False when the folder does not exist (the catalogue is then empty). */
  readonly found: boolean;
  /** Every agent, by id. */
  list(): readonly AgentDefinition[];
  /** An agent by id; 404 `Agent not found: <id>`. */
  get(id: string): AgentDefinition;
  has(id: string): boolean;
  /**
   * Fails (ConfigError naming the agent and the tool) when an agent's tool is not one of the
   * registry's or is a dangerous one (which direct execution never runs).
   */
  checkTools(registry: { get(name: string): { dangerous: boolean } | undefined }): void;
}

/** A catalogue over already-read agents; two files with one id are refused, naming both. */
export function createAgentCatalogue(agents: readonly AgentDefinition[], opts: { dir?: string; found?: boolean } = {}): AgentCatalogue {
  const byId = new Map<string, AgentDefinition>();
  for (const a of agents) {
    const dup = byId.get(a.id);
    if (dup) throw new AgentFileError(a.file, 'id', `${a.id} is also defined by ${dup.file}`);
    byId.set(a.id, a);
  }
  const sorted = Object.freeze([...byId.values()].sort((a, b) => a.id.localeCompare(b.id)));
  return {
    dir: opts.dir ?? '(memory)',
    found: opts.found ?? true,
    list: () => sorted,
    get(id) {
      const a = byId.get(id);
      if (!a) throw notFound(`Agent not found: ${id}`);
      return a;
    },
    has: (id) => byId.has(id),
    checkTools(registry) {
      for (const a of sorted) {
        const t = registry.get(a.tool);
        if (!t) throw new ConfigError('AGENT_CATALOG_DIR', `agent ${a.id} (${a.file}) runs tool ${a.tool}, which is not a registered tool`);
        if (t.dangerous)
          throw new ConfigError('AGENT_CATALOG_DIR', `agent ${a.id} (${a.file}) runs tool ${a.tool}, which is dangerous and never runs directly`);
      }
    },
  };
}

const skipped = (entry: string) => entry.startsWith('.') || entry.startsWith('_');

/**
 * Reads the catalogue folder: every `*.yaml` / `*.yml` file (names starting with `.` or `_`
 * skipped; other files ignored). A folder that does not exist gives an empty catalogue, unless
 * the operator named it (`named`: AGENT_CATALOG_DIR was set): then start-up fails naming the
 * setting, as a missing CONFIG_PATH file does.
 */
export function loadAgentCatalogue(dir: string, opts: { named?: boolean } = {}): AgentCatalogue {
  let entries: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new ConfigError('AGENT_CATALOG_DIR', `${dir} is not a folder`);
    entries = readdirSync(dir).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      if (opts.named) throw new ConfigError('AGENT_CATALOG_DIR', `${dir} does not exist`);
      return createAgentCatalogue([], { dir, found: false });
    }
    if (err instanceof ConfigError) throw err;
    throw new ConfigError('AGENT_CATALOG_DIR', `cannot read ${dir}: ${(err as Error).message}`);
  }
  const agents: AgentDefinition[] = [];
  for (const entry of entries) {
    const ext = entry.endsWith('.yaml') ? '.yaml' : entry.endsWith('.yml') ? '.yml' : undefined;
    if (skipped(entry) || !ext) continue;
    const file = join(dir, entry);
    let bytes: Buffer;
    try {
      if (!statSync(file).isFile()) continue;
      bytes = readFileSync(file);
    } catch (err) {
      throw new ConfigError('AGENT_CATALOG_DIR', `cannot read ${file}: ${(err as Error).message}`);
    }
    agents.push(parseAgentFile(bytes, file, basename(entry, ext)));
  }
  return createAgentCatalogue(agents, { dir, found: true });
}
