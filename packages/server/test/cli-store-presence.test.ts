import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './service-harness.js';
import { POSTGRES_STORE, REDIS_STORE, type SharedStore } from './shared-stores.js';

const HINT = 'Check --store (or RETRYD_STORE); retryd migrate --store … or retryd serve creates one';

/** The commands that work on a store's data, each as an operator would mistype the store under it. */
const COMMANDS: string[][] = [
  ['keys', 'create', '--scope', 'admin', '--name', 'ops'],
  ['keys', 'list'],
  ['keys', 'revoke', '0123456789abcdef'],
  ['tenants', 'limits', 'acme'],
];

// A mistyped --store is told, not made: keys, tenants and rotate-encryption refuse a store without retryd's data.
describe('commands on a store that is not there', () => {
  it('refuse a SQLite file that does not exist, and leave no file behind; migrate creates it, then they work', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retryd-presence-'));
    try {
      const path = join(dir, 'retyrd.db');
      for (const args of [...COMMANDS, ['keys', 'rotate-encryption']]) {
        const run = await runCli([...args, '--store', `sqlite:${path}`], { RETRYD_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') });
        expect(run.code, args.join(' ')).toBe(2);
        expect(run.stderr).toBe(`retryd: no retryd store at --store sqlite:${path}: the SQLite file ${path} does not exist. ${HINT}\n`);
        expect(existsSync(path)).toBe(false);
      }
      expect((await runCli(['migrate', '--store', `sqlite:${path}`])).code).toBe(0);
      const listed = await runCli(['keys', 'list', '--store', `sqlite:${path}`]);
      expect(listed.code, listed.stderr).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  describe.each<{ name: string; shared: SharedStore; reason: string }>([
    { name: 'PostgreSQL', shared: POSTGRES_STORE, reason: 'the PostgreSQL schema retryd_test_\\w+ holds no retryd tables' },
    { name: 'Redis', shared: REDIS_STORE, reason: 'Redis holds no retryd keys under the prefix test-\\S+' },
  ])('on $name', ({ shared, reason }) => {
    afterAll(() => shared.drop());

    it('refuses a schema or prefix without retryd data; migrate makes it, then they work', async () => {
      const store = shared.freshUrl();
      for (const args of COMMANDS) {
        const run = await runCli([...args, '--store', store]);
        expect(run.code, args.join(' ')).toBe(2);
        expect(run.stderr).toMatch(new RegExp(`^retryd: no retryd store at --store \\S+: ${reason}\\. Check --store`));
      }
      // Still not there: the refusals created nothing.
      expect((await runCli(['keys', 'list', '--store', store])).code).toBe(2);
      expect((await runCli(['migrate', '--store', store])).code).toBe(0);
      const listed = await runCli(['keys', 'list', '--store', store]);
      expect(listed.code, listed.stderr).toBe(0);
    }, 60_000);
  });
});
