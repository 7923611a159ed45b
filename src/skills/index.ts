/**
 * Skills (config/skills, SKILLS_DIR): markdown instructions (a system prompt) with YAML front
 * matter, selected by a task's `skill`.
 *
 * Layout: `<dir>/<name>/<version>.md` (one file per version) and/or `<dir>/<name>.md` (a single
 * version). Files and folders whose names start with `.` or `_`, README.md and files that
 * are not `.md` are skipped.
 *
 *   ---
 *   name: code-review          # must equal the folder name (or the flat file's name)
 *   version: "2.0.0"           # semver-like; must equal the file name in a skill folder
 *   description: Reviews a change for bugs and risks
 *   role: critic               # optional: a role preset of the spec (its tool allowlist)
 *   tools: [file_read]         # optional: tool names
 *   model_tier: medium         # optional: small | medium | large
 *   ---
 *   You are a careful reviewer...   (the instructions: the rest of the file, not empty)
 *
 * Every file is read strictly at start-up: unknown fields, wrong types, duplicate keys and a
 * name or version that does not match the path are refused with an error naming the file and
 * the field. `contentHash` is the sha256 (hex) of the file's bytes.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigError } from '../config/index.js';
import { ROLE_NAMES, TIERS, badRequest, isTier, rolePreset, type Tier } from '../kernel/index.js';

export interface SkillSummary {
  name: string;
  /** The latest version. */
  version: string;
  /** The latest version's description. */
  description: string;
  /** Every version, oldest first. */
  versions: string[];
}

export interface Skill {
  name: string;
  version: string;
  /** `name@version` */
  key: string;
  description: string;
  /** A role preset (kernel ROLE_NAMES) the skill's agent runs as. */
  role?: string;
  /** Tool names the skill asks for (checked against the registry by whoever runs it). */
  tools: readonly string[];
  modelTier?: Tier;
  /** The markdown body: the system prompt. */
  instructions: string;
  /** sha256 (hex) of the file's bytes. */
  contentHash: string;
  file: string;
}

export interface SkillCatalog {
  readonly dir: string;
  /** False when the folder does not exist (the catalogue is then empty). */
  readonly found: boolean;
  /** One entry per skill name, by name. */
  list(): SkillSummary[];
  /**
   * A skill by name; `version` absent or empty: the latest (highest release, else highest
   * pre-release). 400 `unknown skill: <name>` / `skill <name> has no version <v>`.
   */
  get(name: string, version?: string | null): Skill;
  has(name: string, version?: string | null): boolean;
  /** Every version of `name`, oldest first; 400 `unknown skill: <name>`. */
  versions(name: string): Skill[];
}

/** A skill file that cannot be used: names the file and the field. Fails start-up. */
export class SkillFileError extends ConfigError {
  override name = 'SkillFileError';
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super('SKILLS_DIR', `${file}: ${field}: ${reason}`);
  }
}

export const SKILL_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const TOOL_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;
export const MAX_SKILL_BYTES = 256 * 1024;
const FIELDS = ['name', 'version', 'description', 'role', 'tools', 'model_tier'] as const;

// ---- versions: the same rules and order as src/templates/version.ts (kept apart so that
// neither domain imports the other). MAJOR[.MINOR[.PATCH]][-PRERELEASE], no leading zeros.
const MAX_VERSION_LENGTH = 64;
const VERSION_RE = /^(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;
function parseVersion(v: string): { nums: string[]; pre: string[] } | undefined {
  const m = v.length <= MAX_VERSION_LENGTH ? VERSION_RE.exec(v) : null;
  return m ? { nums: [m[1], m[2] ?? '0', m[3] ?? '0'], pre: m[4] ? m[4].split('.') : [] } : undefined;
}
const isVersion = (v: unknown): v is string => typeof v === 'string' && parseVersion(v) !== undefined;
const cmpNum = (a: string, b: string) => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);
/** Semver precedence of two valid versions (missing parts are 0; a pre-release before its release). */
export function compareSkillVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) throw new Error(`not a version: ${JSON.stringify(pa ? b : a)}`);
  for (let i = 0; i < 3; i++) {
    const c = cmpNum(pa.nums[i], pb.nums[i]);
    if (c !== 0) return Math.sign(c);
  }
  if (pa.pre.length === 0 || pb.pre.length === 0) return pa.pre.length === pb.pre.length ? 0 : pa.pre.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(pa.pre.length, pb.pre.length); i++) {
    const [x, y] = [pa.pre[i], pb.pre[i]];
    const [xn, yn] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    const c = xn && yn ? cmpNum(x.replace(/^0+(?=\d)/, ''), y.replace(/^0+(?=\d)/, '')) : xn !== yn ? (xn ? -1 : 1) : x < y ? -1 : x > y ? 1 : 0;
    if (c !== 0) return Math.sign(c);
  }
  return Math.sign(pa.pre.length - pb.pre.length);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`.slice(0, 80);
}

/** Splits `---\n<yaml>\n---\n<body>`; the closing line may also be `...`. */
function splitFrontMatter(text: string, fail: (field: string, why: string) => never): { yaml: string; body: string } {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  if (lines[0].replace(/\r$/, '').trimEnd() !== '---') return fail('(front matter)', 'the file must start with a line "---" opening the YAML front matter');
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i].replace(/\r$/, '').trimEnd();
    if (l === '---' || l === '...') return { yaml: lines.slice(1, i).join('\n'), body: lines.slice(i + 1).join('\n') };
  }
  return fail('(front matter)', 'no closing "---" line after the front matter');
}

/**
 * Reads one skill file strictly. `expect` is what its path says: the skill's name, and its
 * version when the file is `<name>/<version>.md`.
 */
export function parseSkillFile(content: Uint8Array | string, file: string, expect: { name?: string; version?: string } = {}): Skill {
  const fail = (field: string, why: string): never => {
    throw new SkillFileError(file, field, why);
  };
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  if (bytes.byteLength > MAX_SKILL_BYTES) fail('(file)', `larger than ${MAX_SKILL_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail('(file)', 'not valid UTF-8');
  }
  const { yaml, body } = splitFrontMatter(text, fail);
  const docs = parseAllDocuments(yaml, { uniqueKeys: true, prettyErrors: true });
  if (!Array.isArray(docs) || docs.length !== 1) return fail('(front matter)', 'must be one YAML mapping with name, version and description');
  const problem = docs[0].errors[0] ?? docs[0].warnings[0];
  if (problem) return fail('(front matter)', `not valid YAML: ${problem.message.split('\n')[0].replace(/:$/, '')}`);
  let fm: unknown;
  try {
    fm = docs[0].toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    return fail('(front matter)', `not valid YAML: ${(err as Error).message}`);
  }
  if (!isObj(fm)) return fail('(front matter)', `must be a mapping with name, version and description, got ${typeName(fm)}`);
  for (const k of Object.keys(fm)) if (!(FIELDS as readonly string[]).includes(k)) fail(k, `unknown field (allowed: ${FIELDS.join(', ')})`);
  const str = (key: string, required: boolean): string | undefined => {
    const v = Object.hasOwn(fm, key) ? fm[key] : undefined;
    if (v === undefined || v === null) return required ? fail(key, 'is required') : undefined;
    if (typeof v === 'number' && key === 'version') return fail(key, `must be a quoted string such as "1.0.0" (YAML read the number ${v})`);
    if (typeof v !== 'string') return fail(key, `must be a string, got ${typeName(v)}`);
    if (v.trim() === '') return fail(key, 'must not be empty');
    return v;
  };

  const name = str('name', true)!;
  if (!SKILL_NAME_RE.test(name)) fail('name', `${JSON.stringify(name)} must match ${SKILL_NAME_RE.source} (letters, digits, _ . -; no @ or /)`);
  if (expect.name !== undefined && name !== expect.name)
    fail('name', `${JSON.stringify(name)} does not match its path (expected ${JSON.stringify(expect.name)})`);
  const version = str('version', true)!;
  if (!isVersion(version))
    fail(
      'version',
      `${JSON.stringify(version)} is not a version: MAJOR[.MINOR[.PATCH]][-PRERELEASE], numbers without leading zeros, at most ${MAX_VERSION_LENGTH} characters`,
    );
  if (expect.version !== undefined && version !== expect.version)
    fail('version', `${JSON.stringify(version)} does not match the file name (expected ${JSON.stringify(expect.version)})`);
  const description = str('description', true)!;
  if (description.length > 2000) fail('description', 'must be at most 2000 characters');

  const role = str('role', false);
  if (role !== undefined) {
    try {
      rolePreset(role);
    } catch (err) {
      fail('role', (err as Error).message.startsWith('unknown role') ? (err as Error).message : `${(err as Error).message} (known: ${ROLE_NAMES.join(', ')})`);
    }
  }
  let tools: string[] = [];
  if (fm.tools !== undefined && fm.tools !== null) {
    if (!Array.isArray(fm.tools)) fail('tools', `must be a list of tool names, got ${typeName(fm.tools)}`);
    tools = (fm.tools as unknown[]).map((t, i) => {
      if (typeof t !== 'string' || !TOOL_RE.test(t)) return fail(`tools[${i}]`, `must be a tool name, got ${typeName(t)}`);
      return t;
    });
    const dup = tools.find((t, i) => tools.indexOf(t) !== i);
    if (dup) fail('tools', `lists ${dup} twice`);
  }
  const tier = str('model_tier', false);
  if (tier !== undefined && !isTier(tier)) fail('model_tier', `must be one of ${TIERS.join(', ')}, got ${JSON.stringify(tier)}`);

  const instructions = body.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd();
  if (instructions === '') fail('instructions', 'the markdown after the front matter (the instructions) is empty');

  return Object.freeze({
    name,
    version,
    key: `${name}@${version}`,
    description,
    ...(role !== undefined ? { role } : {}),
    tools: Object.freeze(tools),
    ...(tier !== undefined ? { modelTier: tier as Tier } : {}),
    instructions,
    contentHash: createHash('sha256').update(bytes).digest('hex'),
    file,
  });
}

/** A catalogue over already-read skills; two files with one name and version are refused, naming both. */
export function createSkillCatalog(skills: readonly Skill[], opts: { dir?: string; found?: boolean } = {}): SkillCatalog {
  const byName = new Map<string, Skill[]>();
  for (const s of skills) {
    const list = byName.get(s.name) ?? [];
    const dup = list.find((x) => compareSkillVersions(x.version, s.version) === 0);
    if (dup) throw new SkillFileError(s.file, 'version', `${s.key} is also defined by ${dup.file}`);
    list.push(s);
    byName.set(s.name, list);
  }
  const latest = new Map<string, Skill>();
  for (const [name, list] of byName) {
    list.sort((a, b) => compareSkillVersions(a.version, b.version));
    const releases = list.filter((s) => parseVersion(s.version)!.pre.length === 0);
    latest.set(name, (releases.length > 0 ? releases : list).at(-1)!);
  }
  const find = (name: string, version?: string | null): Skill | undefined => {
    const list = byName.get(name);
    if (!list) return undefined;
    if (version === undefined || version === null || version === '') return latest.get(name);
    return list.find((s) => s.version === version) ?? (isVersion(version) ? list.find((s) => compareSkillVersions(s.version, version) === 0) : undefined);
  };
  const names = [...byName.keys()].sort();
  return {
    dir: opts.dir ?? '(memory)',
    found: opts.found ?? true,
    list: () =>
      names.map((n) => {
        const l = latest.get(n)!;
        return { name: n, version: l.version, description: l.description, versions: byName.get(n)!.map((s) => s.version) };
      }),
    get(name, version) {
      const s = find(name, version);
      if (s) return s;
      if (!byName.has(name)) throw badRequest(`unknown skill: ${name}`);
      throw badRequest(`skill ${name} has no version ${version}`);
    },
    has: (name, version) => find(name, version) !== undefined,
    versions(name) {
      const list = byName.get(name);
      if (!list) throw badRequest(`unknown skill: ${name}`);
      return [...list];
    },
  };
}

const skipped = (entry: string) => entry.startsWith('.') || entry.startsWith('_') || entry.toLowerCase() === 'readme.md';

function readSkill(file: string, expect: { name?: string; version?: string }): Skill {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new ConfigError('SKILLS_DIR', `cannot read ${file}: ${(err as Error).message}`);
  }
  return parseSkillFile(bytes, file, expect);
}

/**
 * Reads a skills folder (layout above); the first bad file throws a SkillFileError naming the
 * file and the field. A folder that does not exist gives an empty catalogue (`found: false`).
 */
export function loadSkills(dir: string): SkillCatalog {
  let entries: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new ConfigError('SKILLS_DIR', `${dir} is not a folder`);
    entries = readdirSync(dir).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return createSkillCatalog([], { dir, found: false });
    if (err instanceof ConfigError) throw err;
    throw new ConfigError('SKILLS_DIR', `cannot read ${dir}: ${(err as Error).message}`);
  }
  const skills: Skill[] = [];
  const kind = (path: string): 'file' | 'dir' | 'other' => {
    try {
      const st = statSync(path);
      return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
    } catch (err) {
      throw new ConfigError('SKILLS_DIR', `cannot read ${path}: ${(err as Error).message}`);
    }
  };
  for (const entry of entries) {
    if (skipped(entry)) continue;
    const path = join(dir, entry);
    const k = kind(path);
    if (k === 'file' && entry.endsWith('.md')) {
      skills.push(readSkill(path, { name: basename(entry, '.md') }));
    } else if (k === 'dir') {
      let files: string[];
      try {
        files = readdirSync(path).sort();
      } catch (err) {
        throw new ConfigError('SKILLS_DIR', `cannot read ${path}: ${(err as Error).message}`);
      }
      for (const f of files) {
        if (skipped(f) || !f.endsWith('.md')) continue;
        const file = join(path, f);
        if (kind(file) === 'file') skills.push(readSkill(file, { name: entry, version: basename(f, '.md') }));
      }
    }
  }
  return createSkillCatalog(skills, { dir, found: true });
}
