/**
 * The strict reader of one template file.
 *
 * File format (config/templates/*.yaml or *.yml, one template version per file, one YAML
 * document per file; the file is named `<name>.yaml` or `<name>@<version>.yaml`):
 *
 *   name: weekly-report            # [A-Za-z0-9][A-Za-z0-9_.-]*, at most 128 characters
 *   version: "1.1.0"               # semver-like string (quote it: 1.0 is a YAML number)
 *   description: Weekly status report
 *   defaults:                      # optional
 *     model_tier: medium           # small | medium | large
 *     prompt_params: { team: Platform }   # defaults for ${name}; the task's prompt_params win
 *   steps:                         # 1..64 steps, run in order
 *     - id: outline                # [A-Za-z_][A-Za-z0-9_-]*, unique
 *       type: llm                  # llm: prompt (required), system, model_tier
 *       system: You are ${team}'s editor.
 *       prompt: Outline a report on ${query}.
 *     - id: draft
 *       type: llm
 *       prompt: "Write it from this outline:\n${steps.outline}"
 *     - id: footer
 *       type: text                 # text: text (required); no model call
 *       text: "${steps.draft}\n\n-- generated from ${query}"
 *     - id: save
 *       type: tool                 # tool: tool (required), arguments (mapping; strings rendered)
 *       tool: file_write
 *       arguments: { path: report.md, content: "${steps.footer}" }
 *   output: footer                 # optional: the step whose output is the result (default last)
 *
 * Every step may also carry a `description`. Placeholders: `${query}`, `${<param>}` and
 * `${steps.<id>}` of an EARLIER step (checked at load). Unknown fields, wrong types, duplicate
 * keys, YAML tags and a name or version that does not match the file name are refused: the
 * error names the file and the field. `contentHash` is the sha256 (hex) of the file's bytes.
 */
import { createHash } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { MAX_VERSION_LENGTH, TIERS, isTier, isVersion, type Tier } from '../kernel/index.js';
import { STEP_TYPES, TemplateFileError, type Template, type TemplateDefaults, type TemplateStep } from './model.js';
import { stepRefs, stepStrings } from './placeholders.js';

export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const STEP_ID_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const TOOL_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;
const PARAM_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_TEMPLATE_BYTES = 1024 * 1024;
export const MAX_STEPS = 64;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses YAML text strictly (one document, unique keys, no unknown tags, no errors or warnings). */
export function parseYamlStrict(text: string, fail: (field: string, why: string) => never, what = 'file'): unknown {
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true });
  if (!Array.isArray(docs)) return fail('(root)', 'not valid YAML');
  if (docs.length === 0) return fail('(root)', `the ${what} is empty`);
  if (docs.length > 1) return fail('(root)', `the ${what} holds ${docs.length} YAML documents; one template version per file`);
  const doc = docs[0];
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) return fail('(root)', `not valid YAML: ${problem.message.split('\n')[0].replace(/:$/, '')}`);
  try {
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    return fail('(root)', `not valid YAML: ${(err as Error).message}`);
  }
}

/** Field checks that throw a TemplateFileError-like error through `fail`. */
export function fieldReader(fail: (field: string, why: string) => never) {
  const only = (o: Obj, path: string, allowed: readonly string[]) => {
    for (const k of Object.keys(o)) {
      if (!allowed.includes(k)) fail(path ? `${path}.${k}` : k, `unknown field (allowed: ${allowed.join(', ')})`);
    }
  };
  const str = (o: Obj, key: string, path: string, opts: { required?: boolean; nonEmpty?: boolean; max?: number } = {}): string | undefined => {
    const field = path ? `${path}.${key}` : key;
    if (!Object.hasOwn(o, key) || o[key] === undefined || o[key] === null) {
      if (opts.required) fail(field, 'is required');
      return undefined;
    }
    const v = o[key];
    if (typeof v !== 'string') return fail(field, `must be a string, got ${typeName(v)}`);
    if (opts.nonEmpty && v.trim() === '') fail(field, 'must not be empty');
    if (opts.max !== undefined && v.length > opts.max) fail(field, `must be at most ${opts.max} characters`);
    return v;
  };
  const version = (o: Obj, path = ''): string => {
    const field = path ? `${path}.version` : 'version';
    const v = o.version;
    if (v === undefined || v === null) return fail(field, 'is required');
    if (typeof v === 'number') return fail(field, `must be a quoted string such as "1.0.0" (YAML read the number ${v})`);
    if (typeof v !== 'string') return fail(field, `must be a string, got ${typeName(v)}`);
    if (!isVersion(v))
      return fail(
        field,
        `${JSON.stringify(v)} is not a version: MAJOR[.MINOR[.PATCH]][-PRERELEASE], numbers without leading zeros, at most ${MAX_VERSION_LENGTH} characters`,
      );
    return v;
  };
  const tier = (o: Obj, key: string, path: string): Tier | undefined => {
    const v = str(o, key, path);
    if (v === undefined) return undefined;
    if (!isTier(v)) return fail(path ? `${path}.${key}` : key, `must be one of ${TIERS.join(', ')}, got ${JSON.stringify(v)}`);
    return v;
  };
  return { only, str, version, tier };
}

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`.slice(0, 80);
}

/** Checks a tool step's arguments: plain JSON values (no non-finite numbers), depth at most 16. */
function checkJsonValue(v: unknown, field: string, fail: (field: string, why: string) => never, depth = 0): void {
  if (depth > 16) fail(field, 'nested too deeply (at most 16 levels)');
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) fail(field, 'must be a finite number');
    return;
  }
  if (Array.isArray(v)) return v.forEach((x, i) => checkJsonValue(x, `${field}[${i}]`, fail, depth + 1));
  if (isObj(v) && Object.getPrototypeOf(v) === Object.prototype) {
    for (const [k, x] of Object.entries(v)) checkJsonValue(x, `${field}.${k}`, fail, depth + 1);
    return;
  }
  fail(field, `must be a JSON value (string, number, boolean, null, list or mapping), got ${typeName(v)}`);
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** The name and version a template file's name states: `<name>.yaml` or `<name>@<version>.yaml`. */
function fileNameParts(file: string): { name: string; version?: string } {
  const base = file.replace(/^.*[\\/]/, '').replace(/\.ya?ml$/i, '');
  const at = base.indexOf('@');
  return at < 0 ? { name: base } : { name: base.slice(0, at), version: base.slice(at + 1) };
}

/**
 * Reads one template file's content strictly. `file` is used in error messages and checked
 * against the template's name and version (see the format above).
 */
export function parseTemplateFile(content: Uint8Array | string, file: string): Template {
  const fail = (field: string, why: string): never => {
    throw new TemplateFileError(file, field, why);
  };
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  if (bytes.byteLength > MAX_TEMPLATE_BYTES) fail('(root)', `larger than ${MAX_TEMPLATE_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail('(root)', 'not valid UTF-8');
  }
  const raw = parseYamlStrict(text, fail);
  if (!isObj(raw)) return fail('(root)', `must be a mapping with name, version, description and steps, got ${typeName(raw)}`);
  const r = fieldReader(fail);
  r.only(raw, '', ['name', 'version', 'description', 'defaults', 'steps', 'output']);

  const name = r.str(raw, 'name', '', { required: true })!;
  if (!NAME_RE.test(name)) fail('name', `${JSON.stringify(name)} must match ${NAME_RE.source} (letters, digits, _ . -; no @ or /)`);
  const version = r.version(raw);
  const description = r.str(raw, 'description', '', { required: true, nonEmpty: true, max: 2000 })!;

  const fromName = fileNameParts(file);
  if (fromName.name !== name) fail('name', `${JSON.stringify(name)} does not match the file name (expected ${name}.yaml or ${name}@${version}.yaml)`);
  if (fromName.version !== undefined && fromName.version !== version)
    fail('version', `${JSON.stringify(version)} does not match the file name's version ${JSON.stringify(fromName.version)}`);

  const defaults: TemplateDefaults = { promptParams: {} };
  if (raw.defaults !== undefined && raw.defaults !== null) {
    if (!isObj(raw.defaults)) fail('defaults', `must be a mapping, got ${typeName(raw.defaults)}`);
    const d = raw.defaults as Obj;
    r.only(d, 'defaults', ['model_tier', 'prompt_params']);
    defaults.modelTier = r.tier(d, 'model_tier', 'defaults');
    if (d.prompt_params !== undefined && d.prompt_params !== null) {
      if (!isObj(d.prompt_params)) fail('defaults.prompt_params', `must be a mapping, got ${typeName(d.prompt_params)}`);
      const pp: Record<string, string | number | boolean> = {};
      for (const [k, v] of Object.entries(d.prompt_params as Obj)) {
        const field = `defaults.prompt_params.${k}`;
        if (!PARAM_RE.test(k) || k === 'query' || k === 'steps') fail(field, `parameter names match ${PARAM_RE.source} and are not query or steps`);
        if (typeof v !== 'string' && typeof v !== 'boolean' && !(typeof v === 'number' && Number.isFinite(v)))
          fail(field, `must be a string, number or boolean, got ${typeName(v)}`);
        Object.defineProperty(pp, k, { value: v, enumerable: true, writable: true, configurable: true });
      }
      defaults.promptParams = pp;
    }
  }

  if (raw.steps === undefined || raw.steps === null) fail('steps', 'is required');
  if (!Array.isArray(raw.steps)) return fail('steps', `must be a list, got ${typeName(raw.steps)}`);
  if (raw.steps.length === 0) fail('steps', 'must hold at least one step');
  if (raw.steps.length > MAX_STEPS) fail('steps', `at most ${MAX_STEPS} steps, got ${raw.steps.length}`);
  const seen = new Set<string>();
  const steps: TemplateStep[] = raw.steps.map((s: unknown, i: number): TemplateStep => {
    const at = `steps[${i}]`;
    if (!isObj(s)) return fail(at, `must be a mapping, got ${typeName(s)}`);
    const id = r.str(s, 'id', at, { required: true })!;
    if (!STEP_ID_RE.test(id)) fail(`${at}.id`, `${JSON.stringify(id)} must match ${STEP_ID_RE.source}`);
    if (seen.has(id)) fail(`${at}.id`, `duplicate step id ${JSON.stringify(id)}`);
    const type = r.str(s, 'type', at, { required: true })!;
    const description = r.str(s, 'description', at);
    const base = { id, ...(description !== undefined ? { description } : {}) };
    let step: TemplateStep;
    if (type === 'llm') {
      r.only(s, at, ['id', 'type', 'description', 'prompt', 'system', 'model_tier']);
      const system = r.str(s, 'system', at);
      const modelTier = r.tier(s, 'model_tier', at);
      step = {
        ...base,
        type,
        prompt: r.str(s, 'prompt', at, { required: true, nonEmpty: true })!,
        ...(system !== undefined ? { system } : {}),
        ...(modelTier ? { modelTier } : {}),
      };
    } else if (type === 'text') {
      r.only(s, at, ['id', 'type', 'description', 'text']);
      step = { ...base, type, text: r.str(s, 'text', at, { required: true, nonEmpty: true })! };
    } else if (type === 'tool') {
      r.only(s, at, ['id', 'type', 'description', 'tool', 'arguments']);
      const tool = r.str(s, 'tool', at, { required: true })!;
      if (!TOOL_RE.test(tool)) fail(`${at}.tool`, `${JSON.stringify(tool)} is not a tool name`);
      const args = s.arguments ?? {};
      if (!isObj(args)) return fail(`${at}.arguments`, `must be a mapping, got ${typeName(args)}`);
      checkJsonValue(args, `${at}.arguments`, fail);
      step = { ...base, type, tool, arguments: args };
    } else {
      return fail(`${at}.type`, `must be one of ${STEP_TYPES.join(', ')}, got ${JSON.stringify(type)}`);
    }
    for (const { field, value } of stepStrings(step)) {
      for (const ref of stepRefs(value)) {
        if (!seen.has(ref))
          fail(
            `${at}.${field}`,
            ref === id
              ? `\${steps.${ref}} refers to the step itself; a step can use only the outputs of earlier steps`
              : `\${steps.${ref}} does not name an earlier step (earlier steps: ${[...seen].join(', ') || 'none'})`,
          );
      }
    }
    seen.add(id);
    return step;
  });

  const output = r.str(raw, 'output', '') ?? steps[steps.length - 1].id;
  if (!seen.has(output)) fail('output', `${JSON.stringify(output)} is not a step id (steps: ${[...seen].join(', ')})`);

  const contentHash = createHash('sha256').update(bytes).digest('hex');
  return deepFreeze({ name, version, key: `${name}@${version}`, contentHash, description, defaults, steps, output, file });
}
