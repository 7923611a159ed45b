/**
 * Default paths of the catalogues (models, templates, skills): relative to the working
 * directory, falling back to the copies shipped with the package (beside src/ or dist/) when
 * the service is started from another directory.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A configured path, or (when it is the default and missing here) the copy shipped with the package. */
export function shipped(p: string, def: string): string {
  if (p !== def || existsSync(p)) return p;
  return fileURLToPath(new URL(`../../${def.slice(2)}`, import.meta.url));
}
