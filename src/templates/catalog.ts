/** The catalogue of templates: versions of a name in order, the latest one, a given one. */
import { badRequest, compareVersions, isVersion, latestVersion } from '../kernel/index.js';
import { TemplateFileError, type Template, type TemplateCatalog, type TemplateSummary } from './model.js';

/**
 * A catalogue over already-read templates (loadTemplates reads a folder into one). Two
 * files with the same name and version (also `1.1` and `1.1.0`) are refused, naming both.
 */
export function createTemplateCatalog(templates: readonly Template[], opts: { dir?: string; found?: boolean } = {}): TemplateCatalog {
  const byName = new Map<string, Template[]>();
  for (const t of templates) {
    const list = byName.get(t.name) ?? [];
    const dup = list.find((x) => compareVersions(x.version, t.version) === 0);
    if (dup) throw new TemplateFileError(t.file, 'version', `${t.key} is also defined by ${dup.file}`);
    list.push(t);
    byName.set(t.name, list);
  }
  for (const list of byName.values()) list.sort((a, b) => compareVersions(a.version, b.version));
  const latest = new Map<string, Template>();
  for (const [name, list] of byName) {
    const v = latestVersion(list.map((t) => t.version))!;
    latest.set(
      name,
      list.find((t) => t.version === v)!,
    );
  }
  const find = (name: string, version?: string | null): Template | undefined => {
    const list = typeof name === 'string' ? byName.get(name) : undefined;
    if (!list) return undefined;
    if (version === undefined || version === null || version === '') return latest.get(name);
    return list.find((t) => t.version === version) ?? (isVersion(version) ? list.find((t) => compareVersions(t.version, version) === 0) : undefined);
  };
  const summaries = [...byName.keys()]
    .sort()
    .flatMap((n) => byName.get(n)!)
    .map((t): TemplateSummary => ({ name: t.name, version: t.version, key: t.key, contentHash: t.contentHash, description: t.description }));
  return {
    dir: opts.dir ?? '(memory)',
    found: opts.found ?? true,
    size: templates.length,
    get(name, version) {
      const t = find(name, version);
      if (t) return t;
      if (!byName.has(name)) throw badRequest(`unknown template: ${name}`);
      throw badRequest(`template ${name} has no version ${version}`);
    },
    has: (name, version) => find(name, version) !== undefined,
    versions: (name) => (byName.get(name) ?? []).map((t) => t.version),
    list: () => summaries.map((s) => ({ ...s })),
  };
}
