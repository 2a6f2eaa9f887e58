import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// Each client section of the README shows an examples/client-*.mjs file as it is, and the file runs as written
// (against the built package: npm run build).

const root = join(import.meta.dirname, '..', '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

async function run(name: string): Promise<string> {
  const file = join(root, 'examples', `client-${name}.mjs`);
  expect(readme).toContain(readFileSync(file, 'utf8').trim());
  const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 30_000 });
  return stdout;
}

describe('README client examples', () => {
  it('retrying fetch: three attempts with one derived key', async () => {
    expect(await run('fetch')).toMatch(/^201 after 3 attempts, key [0-9a-f]{32}\n$/);
  });

  it('axios: a 429 with Retry-After, then the answer', async () => {
    expect(await run('axios')).toBe('200 {"ok":true} after 2 attempts\n');
  });

  it('gRPC: three attempts of a unary call with one derived key', async () => {
    expect(await run('grpc')).toMatch(/^placed after 3 attempts, key [0-9a-f]{32}\n$/);
  });

  it('the retry queue delivers both events through three failures', async () => {
    const lines = (await run('queue')).trim().split('\n').sort();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^delivered checkout after [2-4] attempts$/);
    expect(lines[1]).toMatch(/^delivered signup after [2-4] attempts$/);
  });

  it('verifying: the signed body is accepted, a changed one refused', async () => {
    expect(await run('verify')).toBe('200 accepted order-42\n401 refused: WEBHOOK_NO_MATCHING_SIGNATURE\n');
  });
});
