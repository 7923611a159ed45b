/** Reads a templates folder (TEMPLATES_DIR) into a catalogue, once, at start-up. */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config/index.js';
import { createTemplateCatalog } from './catalog.js';
import type { Template, TemplateCatalog } from './model.js';
import { parseTemplateFile } from './parse.js';

/**
 * Every `*.yaml` / `*.yml` file directly in `dir` (names starting with `.` are skipped; other
 * files and sub-folders are ignored), each read strictly: the first bad file throws a
 * TemplateFileError naming the file and the field. A folder that does not exist gives an
 * empty catalogue with `found: false` (templates are optional; the caller may warn).
 */
export function loadTemplates(dir: string): TemplateCatalog {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new ConfigError('TEMPLATES_DIR', `${dir} is not a folder`);
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return createTemplateCatalog([], { dir, found: false });
    if (err instanceof ConfigError) throw err;
    throw new ConfigError('TEMPLATES_DIR', `cannot read ${dir}: ${(err as Error).message}`);
  }
  const templates: Template[] = [];
  for (const name of names.sort()) {
    if (name.startsWith('.') || !/\.ya?ml$/i.test(name)) continue;
    const file = join(dir, name);
    let bytes: Buffer;
    try {
      if (!statSync(file).isFile()) continue;
      bytes = readFileSync(file);
    } catch (err) {
      throw new ConfigError('TEMPLATES_DIR', `cannot read ${file}: ${(err as Error).message}`);
    }
    templates.push(parseTemplateFile(bytes, file));
  }
  return createTemplateCatalog(templates, { dir, found: true });
}
