import { describe, expect, it } from 'vitest';
import { lazyImport } from './lazy.js';

describe('lazyImport', () => {
  it('loads nothing until first asked, then once for every caller, concurrent or later', async () => {
    let loads = 0;
    const lib = lazyImport(async () => ({ n: ++loads }));
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([lib(), lib()]);
    expect(await lib()).toBe(a);
    expect(b).toBe(a);
    expect(loads).toBe(1);
  });
});
