/** The catalogue of skills: versions of a name in order, the latest one, a given one. */
import { badRequest, compareVersions, isVersion, latestVersion } from '../kernel/index.js';
import { SkillFileError, type Skill, type SkillCatalog } from './model.js';

/** A catalogue over already-read skills; two files with one name and version are refused, naming both. */
export function createSkillCatalog(skills: readonly Skill[], opts: { dir?: string; found?: boolean } = {}): SkillCatalog {
  const byName = new Map<string, Skill[]>();
  for (const s of skills) {
    const list = byName.get(s.name) ?? [];
    const dup = list.find((x) => compareVersions(x.version, s.version) === 0);
    if (dup) throw new SkillFileError(s.file, 'version', `${s.key} is also defined by ${dup.file}`);
    list.push(s);
    byName.set(s.name, list);
  }
  const latest = new Map<string, Skill>();
  for (const [name, list] of byName) {
    list.sort((a, b) => compareVersions(a.version, b.version));
    const v = latestVersion(list.map((s) => s.version))!;
    latest.set(
      name,
      list.find((s) => s.version === v)!,
    );
  }
  const find = (name: string, version?: string | null): Skill | undefined => {
    const list = byName.get(name);
    if (!list) return undefined;
    if (version === undefined || version === null || version === '') return latest.get(name);
    return list.find((s) => s.version === version) ?? (isVersion(version) ? list.find((s) => compareVersions(s.version, version) === 0) : undefined);
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
