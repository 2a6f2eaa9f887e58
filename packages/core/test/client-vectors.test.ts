import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildClientVectors } from './client-vectors.js';

const FILE = join(import.meta.dirname, '..', '..', '..', 'clients', 'shared', 'client-vectors.json');

// The Go and Python clients read this file to prove they derive keys and delays as core does: it must be what core
// computes today, or a change to core would pass here and leave the other clients behind without a failing test.
describe('clients/shared/client-vectors.json', () => {
  const text = `${JSON.stringify(buildClientVectors(), null, 2)}\n`;

  it('is what @retryd/core computes (RETRYD_WRITE_CLIENT_VECTORS=1 rewrites it)', () => {
    if (process.env.RETRYD_WRITE_CLIENT_VECTORS === '1') writeFileSync(FILE, text);
    expect(readFileSync(FILE, 'utf8'), 'run npm run generate:client-vectors').toBe(text);
  });
});
