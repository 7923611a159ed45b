/**
 * The strict reader of one skill file. Skills (config/skills, SKILLS_DIR) are markdown
 * instructions (a system prompt) with YAML front matter, selected by a task's `skill`.
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
import { parseAllDocuments } from 'yaml';
import { MAX_VERSION_LENGTH, ROLE_NAMES, TIERS, isTier, isVersion, rolePreset, type Tier } from '../kernel/index.js';
import { SkillFileError, type Skill } from './model.js';

export const SKILL_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const TOOL_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;
export const MAX_SKILL_BYTES = 256 * 1024;
const FIELDS = ['name', 'version', 'description', 'role', 'tools', 'model_tier'] as const;

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
