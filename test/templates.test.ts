/**
 * Templates (src/templates): the strict loader (every bad file names its file and field),
 * versions and the latest one, content hashes, placeholders (own keys only, one pass) and the
 * lazily rendered plan a workflow runs step by step; the templates shipped in config/.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, Code, compareVersions, latestVersion } from '../src/kernel/index.js';
import {
  TemplateFileError,
  loadTemplates,
  planTemplate,
  renderTemplateString,
  requiresModel,
  type PlannedStep,
  type Template,
} from '../src/templates/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'templates-test-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const tpl = (name: string, version: string, extra = '') =>
  `name: ${name}\nversion: '${version}'\ndescription: ${name} ${version}\nsteps:\n  - id: only\n    type: text\n    text: v${version} \${query}\n${extra}`;

function loadError(files: Record<string, string>): TemplateFileError {
  const dir = tmp(files);
  let err: unknown;
  try {
    loadTemplates(dir);
  } catch (e) {
    err = e;
  }
  expect(err, 'expected the load to fail').toBeInstanceOf(TemplateFileError);
  return err as TemplateFileError;
}

function appError(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return e as AppError;
  }
  throw new Error('expected an AppError');
}

/** Runs a plan's text steps in order, feeding outputs forward (what a workflow does with journaled steps). */
function runText(steps: readonly PlannedStep[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of steps) {
    if (s.type !== 'text') throw new Error(`step ${s.id} is not a text step`);
    out[s.id] = s.render(out).text;
  }
  return out;
}

describe('versions', () => {
  it('orders numerically, pre-releases before their release, missing parts as 0', () => {
    const sorted = ['1.10.0', '1.9.0', '1.0.0-rc.1', '1.0.0', '1.0.0-alpha', '2', '1.0.0-rc.10', '1.0.0-rc.2', '0.9'].sort(compareVersions);
    expect(sorted).toEqual(['0.9', '1.0.0-alpha', '1.0.0-rc.1', '1.0.0-rc.2', '1.0.0-rc.10', '1.0.0', '1.9.0', '1.10.0', '2']);
    expect(compareVersions('1.1', '1.1.0')).toBe(0);
    expect(compareVersions('10000000000000000000.0.0', '9999999999999999999.0.0')).toBe(1);
  });

  it('latest is the highest release, else the highest pre-release', () => {
    expect(latestVersion(['1.0.0', '2.0.0-beta', '1.2.0'])).toBe('1.2.0');
    expect(latestVersion(['2.0.0-alpha', '2.0.0-beta'])).toBe('2.0.0-beta');
    expect(latestVersion([])).toBeUndefined();
  });
});

describe('loadTemplates', () => {
  it('reads every version, selects the latest by version order (not file order), and a given version', () => {
    const dir = tmp({
      'report.yaml': tpl('report', '1.9.0'),
      'report@1.10.0.yml': tpl('report', '1.10.0'),
      'report@2.0.0-rc.1.yaml': tpl('report', '2.0.0-rc.1'),
      'other.yaml': tpl('other', '0.1.0'),
      'README.md': 'not a template',
      '.hidden.yaml': 'not: [valid',
    });
    const c = loadTemplates(dir);
    expect(c.found).toBe(true);
    expect(c.size).toBe(4);
    expect(c.get('report').version).toBe('1.10.0');
    expect(c.get('report', '').version).toBe('1.10.0');
    expect(c.get('report', '1.9.0').version).toBe('1.9.0');
    expect(c.get('report', '1.9').version).toBe('1.9.0');
    expect(c.get('report', '2.0.0-rc.1').version).toBe('2.0.0-rc.1');
    expect(c.versions('report')).toEqual(['1.9.0', '1.10.0', '2.0.0-rc.1']);
    expect(c.versions('nope')).toEqual([]);
    expect(c.has('report', '3.0.0')).toBe(false);
    expect(c.list().map((s) => s.key)).toEqual(['other@0.1.0', 'report@1.9.0', 'report@1.10.0', 'report@2.0.0-rc.1']);
  });

  it('unknown names and versions are 400s with the documented messages (prototype names included)', () => {
    const c = loadTemplates(tmp({ 'report.yaml': tpl('report', '1.0.0') }));
    for (const name of ['x', 'constructor', '__proto__', 'toString']) {
      const e = appError(() => c.get(name));
      expect(e.code).toBe(Code.InvalidArgument);
      expect(e.message).toBe(`unknown template: ${name}`);
    }
    const e = appError(() => c.get('report', '9.9.9'));
    expect(e.code).toBe(Code.InvalidArgument);
    expect(e.message).toBe('template report has no version 9.9.9');
    expect(appError(() => c.get('report', 'latest')).message).toBe('template report has no version latest');
  });

  it('list() gives name, version, key, description and the sha256 of each file, stable across loads', () => {
    const files = { 'report.yaml': tpl('report', '1.0.0'), 'report@1.1.0.yaml': tpl('report', '1.1.0') };
    const dir = tmp(files);
    const first = loadTemplates(dir).list();
    const sha = (s: string) => createHash('sha256').update(Buffer.from(s)).digest('hex');
    expect(first).toEqual([
      { name: 'report', version: '1.0.0', key: 'report@1.0.0', contentHash: sha(files['report.yaml']), description: 'report 1.0.0' },
      { name: 'report', version: '1.1.0', key: 'report@1.1.0', contentHash: sha(files['report@1.1.0.yaml']), description: 'report 1.1.0' },
    ]);
    expect(loadTemplates(dir).list()).toEqual(first);
    // Editing one version changes its hash only.
    writeFileSync(join(dir, 'report.yaml'), files['report.yaml'] + '# edited\n');
    const again = loadTemplates(dir).list();
    expect(again[0].contentHash).not.toBe(first[0].contentHash);
    expect(again[1].contentHash).toBe(first[1].contentHash);
  });

  it('a folder that does not exist is an empty catalogue; a file where the folder should be is an error', () => {
    const c = loadTemplates(join(tmpdir(), 'no-such-templates-dir-' + process.pid));
    expect(c.found).toBe(false);
    expect(c.list()).toEqual([]);
    const dir = tmp({ 'file.txt': 'x' });
    expect(() => loadTemplates(join(dir, 'file.txt'))).toThrow(/TEMPLATES_DIR: .*file\.txt is not a folder/);
  });

  it('two files with the same name and version (also 1.1 and 1.1.0) fail, naming both files', () => {
    const err = loadError({ 'a.yaml': tpl('a', '1.1'), 'a@1.1.0.yaml': tpl('a', '1.1.0') });
    expect(err.field).toBe('version');
    expect(err.message).toContain('a.yaml');
    expect(err.message).toContain('a@1.1.0.yaml');
  });

  const steps = (body: string) => `name: t\nversion: '1.0.0'\ndescription: d\nsteps:\n${body}`;
  const bad: [string, string, string, RegExp][] = [
    ['not YAML', 'name: [t', '(root)', /not valid YAML/],
    ['an empty file', '', '(root)', /empty/],
    ['two YAML documents', `${tpl('t', '1.0.0')}---\n${tpl('t', '1.1.0')}`, '(root)', /2 YAML documents/],
    ['a list at the root', '- a\n- b\n', '(root)', /must be a mapping/],
    ['a duplicate key', `${tpl('t', '1.0.0')}description: again\n`, '(root)', /unique/],
    ['an unknown top-level field', `${tpl('t', '1.0.0')}extra: 1\n`, 'extra', /unknown field/],
    ['a __proto__ field', `${tpl('t', '1.0.0')}__proto__: {polluted: true}\n`, '__proto__', /unknown field/],
    ['a YAML tag', `${tpl('t', '1.0.0')}output: !custom only\n`, '(root)', /not valid YAML|tag/i],
    ['no name', "version: '1.0.0'\ndescription: d\nsteps: [{id: a, type: text, text: x}]\n", 'name', /is required/],
    ['a name with @', tpl('t@x', '1.0.0'), 'name', /must match/],
    ['a name unlike the file name', tpl('other', '1.0.0'), 'name', /does not match the file name/],
    ['an unquoted number version', 'name: t\nversion: 1.0\ndescription: d\nsteps: [{id: a, type: text, text: x}]\n', 'version', /quoted string.*1/],
    ['a version that is not semver-like', tpl('t', 'v1'), 'version', /not a version/],
    ['a leading zero', tpl('t', '01.0.0'), 'version', /not a version/],
    ['an empty description', "name: t\nversion: '1.0.0'\ndescription: '  '\nsteps: [{id: a, type: text, text: x}]\n", 'description', /must not be empty/],
    ['no steps', "name: t\nversion: '1.0.0'\ndescription: d\n", 'steps', /is required/],
    ['an empty step list', "name: t\nversion: '1.0.0'\ndescription: d\nsteps: []\n", 'steps', /at least one/],
    ['a step that is not a mapping', steps('  - just text\n'), 'steps[0]', /mapping/],
    ['an unknown step type', steps('  - {id: a, type: python, text: x}\n'), 'steps[0].type', /llm, text, tool/],
    ['an llm step without prompt', steps('  - {id: a, type: llm}\n'), 'steps[0].prompt', /is required/],
    ['a prompt that is not a string', steps('  - {id: a, type: llm, prompt: [x]}\n'), 'steps[0].prompt', /must be a string/],
    ['a text step with system', steps('  - {id: a, type: text, text: x, system: s}\n'), 'steps[0].system', /unknown field/],
    ['a text step with prompt', steps('  - {id: a, type: text, prompt: x}\n'), 'steps[0].prompt', /unknown field/],
    ['a bad step id', steps('  - {id: 1a, type: text, text: x}\n'), 'steps[0].id', /must match/],
    ['a duplicate step id', steps('  - {id: a, type: text, text: x}\n  - {id: a, type: text, text: y}\n'), 'steps[1].id', /duplicate/],
    ['a reference to a later step', steps('  - {id: a, type: text, text: "${steps.b}"}\n  - {id: b, type: text, text: y}\n'), 'steps[0].text', /earlier step/],
    ['a reference to itself', steps('  - {id: a, type: llm, prompt: "${steps.a}"}\n'), 'steps[0].prompt', /itself/],
    ['a reference to no step', steps('  - {id: a, type: text, text: x}\n  - {id: b, type: llm, prompt: p, system: "${steps.zz}"}\n'), 'steps[1].system', /zz/],
    ['a malformed step reference', steps('  - {id: a, type: text, text: x}\n  - {id: b, type: text, text: "${steps.a.b}"}\n'), 'steps[1].text', /a\.b/],
    [
      'a reference in tool arguments',
      steps('  - {id: a, type: tool, tool: calculator, arguments: {e: ["${steps.x}"]}}\n'),
      'steps[0].arguments.e[0]',
      /steps\.x/,
    ],
    ['a tool step without tool', steps('  - {id: a, type: tool}\n'), 'steps[0].tool', /is required/],
    ['tool arguments that are a list', steps('  - {id: a, type: tool, tool: calculator, arguments: [1]}\n'), 'steps[0].arguments', /mapping/],
    ['a bad step model_tier', steps('  - {id: a, type: llm, prompt: p, model_tier: huge}\n'), 'steps[0].model_tier', /small, medium, large/],
    ['a bad defaults.model_tier', `${tpl('t', '1.0.0')}defaults: {model_tier: xl}\n`, 'defaults.model_tier', /small, medium, large/],
    ['an unknown defaults field', `${tpl('t', '1.0.0')}defaults: {temperature: 1}\n`, 'defaults.temperature', /unknown field/],
    [
      'a default param that is a mapping',
      `${tpl('t', '1.0.0')}defaults: {prompt_params: {a: {b: 1}}}\n`,
      'defaults.prompt_params.a',
      /string, number or boolean/,
    ],
    ['a default param named query', `${tpl('t', '1.0.0')}defaults: {prompt_params: {query: q}}\n`, 'defaults.prompt_params.query', /not query/],
    ['an output that is not a step', `${tpl('t', '1.0.0')}output: nope\n`, 'output', /not a step id/],
  ];
  it.each(bad)('refuses %s, naming the file and the field', (_what, text, field, reason) => {
    const err = loadError({ 'ok.yaml': tpl('ok', '1.0.0'), 't.yaml': text });
    expect(err.file).toMatch(/[\\/]t\.yaml$/);
    expect(err.field).toBe(field);
    expect(err.reason).toMatch(reason);
    expect(err.message).toContain(err.file);
    expect(err.message).toContain(`: ${field}: `);
    expect(err.variable).toBe('TEMPLATES_DIR');
  });

  it('refuses a version that differs from the one in the file name', () => {
    const err = loadError({ 't@2.0.0.yaml': tpl('t', '1.0.0') });
    expect(err.field).toBe('version');
    expect(err.reason).toMatch(/2\.0\.0/);
  });

  it('refuses a file that is not UTF-8', () => {
    const dir = tmp({});
    writeFileSync(join(dir, 't.yaml'), Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x20, 0xff, 0xfe, 0x0a]));
    expect(() => loadTemplates(dir)).toThrow(/t\.yaml: \(root\): not valid UTF-8/);
  });
});

describe('renderTemplateString', () => {
  it('fills own keys and leaves every other placeholder as written', () => {
    expect(renderTemplateString('Hi ${name}, ${missing}!', { name: 'Ann' })).toBe('Hi Ann, ${missing}!');
    expect(renderTemplateString('${n} ${b} ${z} ${o} ${l}', { n: 3, b: false, z: null, o: { a: [1] }, l: ['x'] })).toBe('3 false  {"a":[1]} ["x"]');
    expect(renderTemplateString('${u}', { u: undefined })).toBe('${u}');
    expect(renderTemplateString('${ spaced } ${} ${a-b} $name', { spaced: 1, name: 2 })).toBe('${ spaced } ${} ${a-b} $name');
  });

  it('never reads inherited properties: prototype names stay as written', () => {
    const s = '${constructor}|${toString}|${__proto__}|${hasOwnProperty}|${valueOf}';
    expect(renderTemplateString(s, {})).toBe(s);
    expect(renderTemplateString(s, Object.create({ constructor: 'inherited' }) as Record<string, unknown>)).toBe(s);
    // An own key of that name (what JSON.parse of prompt_params gives) is a value like any other.
    const own = JSON.parse('{"__proto__": "P", "constructor": "C"}') as Record<string, unknown>;
    expect(renderTemplateString(s, own)).toBe('C|${toString}|P|${hasOwnProperty}|${valueOf}');
  });

  it('is one pass: text a value brings in is not expanded again', () => {
    expect(renderTemplateString('${a} ${b}', { a: '${b}', b: 'B' })).toBe('${b} B');
  });
});

describe('planTemplate', () => {
  function template(files: Record<string, string>, name: string, version?: string): Template {
    return loadTemplates(tmp(files)).get(name, version);
  }
  const pipeline = `name: p
version: '1.0.0'
description: pipeline
defaults:
  model_tier: medium
  prompt_params: { team: Defaults, lang: en }
steps:
  - id: outline
    type: llm
    system: Writer for \${team} in \${lang}
    prompt: Outline \${query}
  - id: draft
    type: llm
    model_tier: large
    prompt: "Draft from \${steps.outline} for \${team}"
  - id: save
    type: tool
    tool: file_write
    arguments: { path: "\${team}.md", content: "\${steps.draft}", keep: 3, nested: [{ "\${team}": "\${query}" }] }
  - id: done
    type: text
    text: "Saved \${steps.save}; \${constructor} \${steps.outline}"
output: draft
`;

  it('renders each step lazily from the query, parameters over defaults, and earlier outputs', () => {
    const t = template({ 'p.yaml': pipeline }, 'p');
    expect(requiresModel(t)).toBe(true);
    const plan = planTemplate(t, { query: 'Q', params: { team: 'Core' } });
    expect(plan.template.key).toBe('p@1.0.0');
    expect(plan.template.contentHash).toBe(t.contentHash);
    expect(plan.output).toBe('draft');
    expect(plan.requiresModel).toBe(true);
    expect(plan.steps.map((s) => [s.id, s.type, s.index, s.needs])).toEqual([
      ['outline', 'llm', 0, []],
      ['draft', 'llm', 1, ['outline']],
      ['save', 'tool', 2, ['draft']],
      ['done', 'text', 3, ['save', 'outline']],
    ]);
    const [outline, draft, save, done] = plan.steps;
    if (outline.type !== 'llm' || draft.type !== 'llm' || save.type !== 'tool' || done.type !== 'text') throw new Error('step types');
    expect(outline.modelTier).toBe('medium');
    expect(draft.modelTier).toBe('large');
    expect(outline.render({})).toEqual({ prompt: 'Outline Q', system: 'Writer for Core in en' });
    expect(draft.render({ outline: 'O ${query}' })).toEqual({ prompt: 'Draft from O ${query} for Core' });
    expect(save.tool).toBe('file_write');
    expect(save.render({ draft: 'D' })).toEqual({ arguments: { path: 'Core.md', content: 'D', keep: 3, nested: [{ '${team}': 'Q' }] } });
    expect(done.render({ outline: 'O', save: 'ok' })).toEqual({ text: 'Saved ok; ${constructor} O' });
    // Rendering is pure: the same inputs give the same strings (a replay renders what it rendered before).
    expect(draft.render({ outline: 'O ${query}' })).toEqual(draft.render({ outline: 'O ${query}' }));
  });

  it("throws when a step's needed output is not given (own keys only)", () => {
    const plan = planTemplate(template({ 'p.yaml': pipeline }, 'p'), { query: 'Q' });
    expect(() => plan.steps[1].render({})).toThrow(/step draft needs the output of step outline/);
    expect(() => plan.steps[1].render(Object.create({ outline: 'inherited' }) as Record<string, string>)).toThrow(/outline/);
  });

  it('parameters cannot shadow query or step outputs; prototype-named parameters neither leak nor pollute', () => {
    const t = template(
      {
        'q.yaml':
          "name: q\nversion: '1.0.0'\ndescription: d\nsteps:\n  - {id: a, type: text, text: 'A'}\n  - {id: b, type: text, text: '${query}|${steps.a}|${__proto__}|${constructor}|${x}'}\n",
      },
      'q',
    );
    const params = JSON.parse('{"query": "evil", "steps.a": "evil", "__proto__": {"x": "polluted"}, "x": 1}') as Record<string, unknown>;
    const out = runText(planTemplate(t, { query: 'real', params }).steps);
    expect(out.b).toBe('real|A|{"x":"polluted"}|${constructor}|1');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(runText(planTemplate(t, { query: 'real', params: null }).steps).b).toBe('real|A|${__proto__}|${constructor}|${x}');
  });

  it('output defaults to the last step', () => {
    const t = template({ 'r.yaml': tpl('r', '1.0.0') }, 'r');
    expect(t.output).toBe('only');
    expect(requiresModel(t)).toBe(false);
    expect(planTemplate(t, { query: 'z' }).requiresModel).toBe(false);
  });
});

describe('the templates shipped in config/templates', () => {
  const c = loadTemplates(join(process.cwd(), 'config/templates'));

  it('weekly-report: two versions, latest 1.1.0, an llm pipeline outline -> draft', () => {
    expect(c.versions('weekly-report')).toEqual(['1.0.0', '1.1.0']);
    const latest = c.get('weekly-report');
    expect(latest.version).toBe('1.1.0');
    expect(requiresModel(latest)).toBe(true);
    for (const v of ['1.0.0', '1.1.0']) {
      const t = c.get('weekly-report', v);
      expect(t.steps.slice(0, 2).map((s) => [s.id, s.type])).toEqual([
        ['outline', 'llm'],
        ['draft', 'llm'],
      ]);
      expect(t.contentHash).toBe(createHash('sha256').update(readFileSync(t.file)).digest('hex'));
    }
  });

  it('release-notes runs with no model and renders the change list', () => {
    const t = c.get('release-notes');
    expect(requiresModel(t)).toBe(false);
    const plan = planTemplate(t, { query: '- Fixed the thing', params: { product: 'Taskorch', version: '0.2.0', date: '2025-01-31' } });
    const out = runText(plan.steps)[plan.output];
    expect(out).toMatch(/^# Taskorch 0\.2\.0 \(2025-01-31\)\n/);
    expect(out).toContain('- Fixed the thing');
    expect(out).not.toContain('${');
  });
});

describe('a loaded template is immutable', () => {
  it('is frozen all the way down', () => {
    const dir = tmp({ 'f.yaml': tpl('f', '1.0.0') });
    mkdirSync(join(dir, 'sub.yaml')); // a folder with a template-like name is ignored
    const t = loadTemplates(dir).get('f');
    expect(Object.isFrozen(t)).toBe(true);
    expect(Object.isFrozen(t.steps[0])).toBe(true);
    expect(Object.isFrozen(t.defaults.promptParams)).toBe(true);
  });
});
