import { afterAll, describe, expect, it } from 'vitest';
import { readPersistence, durabilityMode, warnsAtStart } from '../src/backends/redis/durability.js';
import { REDIS_URL, dropPrefixes, freshPrefix, adminClient } from './redis-harness.js';
import { startServiceProcess, stopService } from './service-harness.js';
import { waitFor } from './wait-for.js';

// `retryd serve` on a Redis that may lose acknowledged tasks says so at start, in a warning naming the settings and
// what to set. The test server runs as CI starts it (appendonly no, save ""): it must warn.

afterAll(dropPrefixes);

describe('retryd serve on a Redis that persists nothing', () => {
  it('warns at start, naming the settings and the fix', async () => {
    const probe = adminClient();
    const mode = durabilityMode(await readPersistence(probe));
    probe.disconnect();
    const service = await startServiceProcess(['--store', `${REDIS_URL}?prefix=${freshPrefix()}`]);
    try {
      if (!warnsAtStart(mode)) {
        // A test server configured durable: nothing to warn about, and nothing is logged.
        expect(service.logs.some((l) => l.event === 'store_not_durable')).toBe(false);
        return;
      }
      await waitFor('the durability warning', () => service.logs.some((l) => l.event === 'store_not_durable'), 10_000);
      const line = service.logs.find((l) => l.event === 'store_not_durable') as Record<string, unknown>;
      expect(line.level).toBe(40);
      expect(String(line.msg)).toContain('appendonly yes and appendfsync always');
      expect(String(line.storeDurability)).toMatch(new RegExp(`^${mode} \\(`));
    } finally {
      await stopService(service);
    }
  });
});
