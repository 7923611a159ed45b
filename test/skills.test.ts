/**
 * Skills (src/skills): markdown files with YAML front matter, one file per version in a
 * folder per skill or one flat file; the latest version; strict validation naming the file
 * and the field; content hashes; the skills shipped in config/skills.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, Code, compareVersions } from '../src/kernel/index.js';
import { SkillFileError, loadSkills, parseSkillFile } from '../src/skills/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), 'skills-test-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const skill = (name: string, version: string, extra = '', body = `Instructions of ${name} ${version}.`) =>
  `---\nname: ${name}\nversion: '${version}'\ndescription: ${name} at ${version}\n${extra}---\n${body}\n`;

function loadError(files: Record<string, string | Buffer>): SkillFileError {
  let err: unknown;
  try {
    loadSkills(tmp(files));
  } catch (e) {
    err = e;
  }
  expect(err, 'expected the load to fail').toBeInstanceOf(SkillFileError);
  return err as SkillFileError;
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

describe('loadSkills', () => {
  it('reads folders of versions and flat files; latest by version order; a given version', () => {
    const c = loadSkills(
      tmp({
        'review/1.9.0.md': skill('review', '1.9.0'),
        'review/1.10.0.md': skill('review', '1.10.0', 'role: critic\ntools: [file_read, web_search]\nmodel_tier: large\n'),
        'review/2.0.0-beta.md': skill('review', '2.0.0-beta'),
        'summarize.md': skill('summarize', '0.3.0'),
        'README.md': '# not a skill',
        '_drafts/x.md': 'not a skill',
        'notes.txt': 'ignored',
      }),
    );
    expect(c.found).toBe(true);
    expect(c.list()).toEqual([
      { name: 'review', version: '1.10.0', description: 'review at 1.10.0', versions: ['1.9.0', '1.10.0', '2.0.0-beta'] },
      { name: 'summarize', version: '0.3.0', description: 'summarize at 0.3.0', versions: ['0.3.0'] },
    ]);
    const latest = c.get('review');
    expect(latest).toMatchObject({
      name: 'review',
      version: '1.10.0',
      key: 'review@1.10.0',
      role: 'critic',
      tools: ['file_read', 'web_search'],
      modelTier: 'large',
      instructions: 'Instructions of review 1.10.0.',
    });
    expect(c.get('review', '1.9.0').version).toBe('1.9.0');
    expect(c.get('review', '1.9').version).toBe('1.9.0');
    expect(c.get('review', '2.0.0-beta').instructions).toBe('Instructions of review 2.0.0-beta.');
    expect(c.get('summarize').role).toBeUndefined();
    expect(c.get('summarize').tools).toEqual([]);
    expect(c.versions('review').map((s) => s.version)).toEqual(['1.9.0', '1.10.0', '2.0.0-beta']);
    expect(c.has('review', '3.0.0')).toBe(false);
    expect(c.has('README')).toBe(false);
  });

  it('a skill with only pre-releases has the highest one as latest', () => {
    const c = loadSkills(tmp({ 's/1.0.0-alpha.md': skill('s', '1.0.0-alpha'), 's/1.0.0-alpha.2.md': skill('s', '1.0.0-alpha.2') }));
    expect(c.get('s').version).toBe('1.0.0-alpha.2');
    expect(compareVersions('1.0.0-alpha.10', '1.0.0-alpha.2')).toBe(1);
  });

  it('unknown skills and versions are 400s with the documented messages (prototype names included)', () => {
    const c = loadSkills(tmp({ 's.md': skill('s', '1.0.0') }));
    for (const name of ['nope', 'constructor', '__proto__', 'hasOwnProperty']) {
      const e = appError(() => c.get(name));
      expect(e.code).toBe(Code.InvalidArgument);
      expect(e.message).toBe(`unknown skill: ${name}`);
      expect(appError(() => c.versions(name)).message).toBe(`unknown skill: ${name}`);
      expect(c.has(name)).toBe(false);
    }
    expect(appError(() => c.get('s', '2.0.0')).message).toBe('skill s has no version 2.0.0');
  });

  it('instructions are the body without the blank lines around it; CRLF files work', () => {
    const c = loadSkills(tmp({ 'crlf.md': "---\r\nname: crlf\r\nversion: '1.0.0'\r\ndescription: d\r\n---\r\n\r\n  Line one.\r\nLine two.\r\n\r\n" }));
    expect(c.get('crlf').instructions).toBe('  Line one.\r\nLine two.');
  });

  it('content hashes are the sha256 of the file bytes, stable across loads, per version', () => {
    const files = { 'h/1.0.0.md': skill('h', '1.0.0'), 'h/1.1.0.md': skill('h', '1.1.0') };
    const dir = tmp(files);
    const hashes = () =>
      loadSkills(dir)
        .versions('h')
        .map((s) => s.contentHash);
    const first = hashes();
    expect(first).toEqual([files['h/1.0.0.md'], files['h/1.1.0.md']].map((t) => createHash('sha256').update(Buffer.from(t)).digest('hex')));
    expect(hashes()).toEqual(first);
    writeFileSync(join(dir, 'h/1.1.0.md'), skill('h', '1.1.0', '', 'Changed.'));
    const again = hashes();
    expect(again[0]).toBe(first[0]);
    expect(again[1]).not.toBe(first[1]);
  });

  it('a folder that does not exist is an empty catalogue', () => {
    const c = loadSkills(join(tmpdir(), 'no-such-skills-dir-' + process.pid));
    expect(c.found).toBe(false);
    expect(c.list()).toEqual([]);
  });

  it('the same version twice (a flat file and a folder, or 1.1 and 1.1.0) fails naming both files', () => {
    const a = loadError({ 'd.md': skill('d', '1.0.0'), 'd/1.0.0.md': skill('d', '1.0.0') });
    expect(a.field).toBe('version');
    expect(a.message).toMatch(/d\.md/);
    expect(a.message).toMatch(/d[\\/]1\.0\.0\.md/);
    const b = loadError({ 'e/1.1.md': skill('e', '1.1'), 'e/1.1.0.md': skill('e', '1.1.0') });
    expect(b.message).toMatch(/e@1\.1(\.0)? is also defined by/);
  });

  const fm = (lines: string, body = 'Do it.') => `---\n${lines}\n---\n${body}\n`;
  const ok = "name: s\nversion: '1.0.0'\ndescription: d";
  const bad: [string, string, string | Buffer, string, RegExp][] = [
    ['no front matter', 's.md', 'Just markdown.\n', '(front matter)', /start with a line "---"/],
    ['an unclosed front matter', 's.md', `---\n${ok}\nDo it.\n`, '(front matter)', /no closing/],
    ['front matter that is not YAML', 's.md', fm('name: [s'), '(front matter)', /not valid YAML/],
    ['front matter that is a list', 's.md', fm('- a'), '(front matter)', /mapping/],
    ['a duplicate key', 's.md', fm(`${ok}\nname: s`), '(front matter)', /unique/],
    ['an unknown field', 's.md', fm(`${ok}\nprompt: x`), 'prompt', /unknown field/],
    ['a __proto__ field', 's.md', fm(`${ok}\n__proto__: {a: 1}`), '__proto__', /unknown field/],
    ['no name', 's.md', fm("version: '1.0.0'\ndescription: d"), 'name', /is required/],
    ['a name unlike the file', 's.md', fm("name: t\nversion: '1.0.0'\ndescription: d"), 'name', /does not match/],
    ['a name unlike the folder', 'x/1.0.0.md', fm(ok), 'name', /expected "x"/],
    ['a version unlike the file name', 's/2.0.0.md', fm(ok), 'version', /expected "2\.0\.0"/],
    ['an unquoted number version', 's.md', fm('name: s\nversion: 1.0\ndescription: d'), 'version', /quoted string/],
    ['a version that is not semver-like', 's.md', fm("name: s\nversion: 'one'\ndescription: d"), 'version', /not a version/],
    ['no description', 's.md', fm("name: s\nversion: '1.0.0'"), 'description', /is required/],
    ['an unknown role', 's.md', fm(`${ok}\nrole: wizard`), 'role', /unknown role: wizard/],
    ['a role this edition cannot run', 's.md', fm(`${ok}\nrole: browser_use`), 'role', /browser tools/],
    ['tools that are not a list', 's.md', fm(`${ok}\ntools: file_read`), 'tools', /list of tool names/],
    ['a tool that is not a name', 's.md', fm(`${ok}\ntools: [file_read, 3]`), 'tools[1]', /tool name/],
    ['a tool listed twice', 's.md', fm(`${ok}\ntools: [a, a]`), 'tools', /twice/],
    ['a bad model_tier', 's.md', fm(`${ok}\nmodel_tier: huge`), 'model_tier', /small, medium, large/],
    ['empty instructions', 's.md', fm(ok, '\n   \n'), 'instructions', /empty/],
    ['bytes that are not UTF-8', 's.md', Buffer.concat([Buffer.from(`---\n${ok}\n---\n`), Buffer.from([0xff, 0xfe])]), '(file)', /UTF-8/],
  ];
  it.each(bad)('refuses %s, naming the file and the field', (_what, path, content, field, reason) => {
    const err = loadError({ 'fine.md': skill('fine', '1.0.0'), [path]: content });
    expect(err.file.endsWith(join(path))).toBe(true);
    expect(err.field).toBe(field);
    expect(err.reason).toMatch(reason);
    expect(err.message).toContain(`${err.file}: ${field}: `);
    expect(err.variable).toBe('SKILLS_DIR');
  });

  it('parseSkillFile reads a file on its own', () => {
    const s = parseSkillFile(skill('p', '1.2.3', 'tools: []\n'), 'mem/p.md');
    expect(s).toMatchObject({ name: 'p', version: '1.2.3', tools: [], file: 'mem/p.md' });
    expect(Object.isFrozen(s)).toBe(true);
  });
});

describe('the skills shipped in config/skills', () => {
  const c = loadSkills(join(process.cwd(), 'config/skills'));

  it('code-review has versions 1.0.0 and 2.0.0, latest 2.0.0; summarize is a flat single version', () => {
    expect(c.versions('code-review').map((s) => s.version)).toEqual(['1.0.0', '2.0.0']);
    const cr = c.get('code-review');
    expect(cr.version).toBe('2.0.0');
    expect(cr.instructions.length).toBeGreaterThan(100);
    expect(cr.contentHash).toBe(createHash('sha256').update(readFileSync(cr.file)).digest('hex'));
    expect(c.get('code-review', '1.0.0').instructions).not.toBe(cr.instructions);
    expect(c.get('summarize').file).toMatch(/summarize\.md$/);
    expect(c.list().find((s) => s.name === 'summarize')).toMatchObject({ versions: ['1.0.0'] });
  });
});
