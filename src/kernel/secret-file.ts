/**
 * A secret generated once into a file of DATA_DIR (mode 0600), so every process sharing that
 * folder agrees on it: written to a private temporary file and hard-linked into place, so
 * processes starting together never read a half-written secret, and the first link wins.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The secret in `dataDir/name`, created with `generate()` when absent; `created`: this call made it. */
export function secretFileIn(dataDir: string, name: string, generate: () => string): { value: string; created: boolean; file: string } {
  const file = join(dataDir, name);
  let created = false;
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
    writeFileSync(tmp, generate(), { mode: 0o600, flag: 'wx' });
    try {
      linkSync(tmp, file);
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
  }
  return { value: readFileSync(file, 'utf8').trim(), created, file };
}
