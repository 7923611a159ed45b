/** Reads a skills folder (SKILLS_DIR) into a catalogue, once, at start-up. */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ConfigError } from '../config/index.js';
import { createSkillCatalog } from './catalog.js';
import type { Skill, SkillCatalog } from './model.js';
import { parseSkillFile } from './parse.js';

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
