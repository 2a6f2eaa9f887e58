import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '@retryd/core';
import type { Engine } from '../src/engine/engine.js';
import type { FaultPoint } from '../src/engine/fault-point.js';
import { clockFromEnv, faultHookFromEnv } from '../src/service/test-faults.js';
import { enqueue, openTempStore, reply, startServer, taskFor, testEngine, waitForStatus, type TestServer } from './engine-helpers.js';

// The test-only switches of `retryd serve` the chaos suite stops and skews instances with (their effect on a real
// process is shown by packages/server/chaos/): read from the environment, refused when malformed, absent when unset.

describe('RETRYD_FAULT_PAUSE_AT and RETRYD_CLOCK_OFFSET_MS', () => {
  it('are nothing when unset or empty', () => {
    expect(faultHookFromEnv({})).toBeUndefined();
    expect(faultHookFromEnv({ RETRYD_FAULT_PAUSE_AT: '' })).toBeUndefined();
    expect(clockFromEnv({})).toBeUndefined();
    expect(clockFromEnv({ RETRYD_CLOCK_OFFSET_MS: '' })).toBeUndefined();
  });

  it('refuse a malformed value, naming the variable and the rule', () => {
    expect(() => faultHookFromEnv({ RETRYD_FAULT_PAUSE_AT: 'before-send' })).toThrow(
      'RETRYD_FAULT_PAUSE_AT must be one of after-claim, after-response, got before-send',
    );
    expect(() => clockFromEnv({ RETRYD_CLOCK_OFFSET_MS: '1h' })).toThrow('RETRYD_CLOCK_OFFSET_MS must be an integer (ms), got 1h');
    expect(() => clockFromEnv({ RETRYD_CLOCK_OFFSET_MS: '1.5' })).toThrow('RETRYD_CLOCK_OFFSET_MS must be an integer (ms), got 1.5');
  });

  it('offset the clock by the given ms, ahead or behind', () => {
    for (const offset of [3_600_000, -3_600_000]) {
      const clock = clockFromEnv({ RETRYD_CLOCK_OFFSET_MS: String(offset) })!;
      const before = systemClock.now();
      const skewed = clock.now();
      const after = systemClock.now();
      expect(skewed).toBeGreaterThanOrEqual(before + offset);
      expect(skewed).toBeLessThanOrEqual(after + offset);
    }
  });
});

describe('the engine fault points', () => {
  let engine: Engine | undefined;
  let server: TestServer | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await engine?.stop({ graceMs: 1_000 });
    await server?.close();
    await cleanup?.();
  });

  it('are called after the claim, before the request, and after the response, before it is recorded', async () => {
    const opened = await openTempStore();
    cleanup = opened.cleanup;
    const seen: string[] = [];
    server = await startServer((_req, res) => {
      seen.push('request');
      reply(res, 200, 'ok');
    });
    const hook = (point: FaultPoint, task: { status: string }) => void seen.push(`${point} ${task.status}`);
    engine = testEngine(opened.store, { faultHook: hook }).engine;
    await engine.start();
    const [task] = await enqueue(opened.store, engine, taskFor(server.url));
    await waitForStatus(opened.store, task!, 'SUCCEEDED');
    expect(seen).toEqual(['after-claim IN_FLIGHT', 'request', 'after-response IN_FLIGHT']);
  });
});
