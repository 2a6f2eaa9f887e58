import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupAfterEach, IdempotentDownstream, startServiceProcess, stopService } from './service-harness.js';
import { waitFor } from './wait-for.js';

// The chaos suite's switches (RETRYD_FAULT_PAUSE_AT, RETRYD_CLOCK_OFFSET_MS) reach `retryd serve` only through the
// test-only entry (src/service/test-faults-entry.ts): the service itself, as published, ignores them.

const SWITCHES = { RETRYD_FAULT_PAUSE_AT: 'after-claim', RETRYD_CLOCK_OFFSET_MS: String(24 * 3_600_000) };

describe('the test-only switches of retryd serve', () => {
  const cleanup = cleanupAfterEach();

  async function serviceWithSwitches(testSwitches: boolean) {
    const dir = await mkdtemp(join(tmpdir(), 'retryd-switches-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const downstream = new IdempotentDownstream(0);
    const target = await downstream.start();
    cleanup.push(() => downstream.close());
    const args = ['--store', `sqlite:${join(dir, 'retryd.db')}`, '--allow-targets', '127.0.0.1/32'];
    const service = await startServiceProcess(args, SWITCHES, { testSwitches });
    cleanup.push(() => stopService(service));
    const res = await fetch(`${service.url}/retry-tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ targetUrl: `${target}/charge`, method: 'POST', idempotencyKey: 'order-1', body: { n: 1 } }),
    });
    expect(res.status).toBe(201);
    const { taskId } = (await res.json()) as { taskId: string };
    return { service, downstream, taskId };
  }

  it('are ignored by a service started without the test-only entry: no pause, the machine clock', async () => {
    const { service, downstream, taskId } = await serviceWithSwitches(false);
    await waitFor(
      'the task to succeed',
      async () => {
        const task = (await (await fetch(`${service.url}/retry-tasks/${taskId}`)).json()) as { status: string };
        return task.status === 'SUCCEEDED';
      },
    );
    expect(downstream.processed.get('order-1')).toBe(1);
    expect(service.logs.filter((line) => line.event === 'fault_pause')).toEqual([]);
    const task = (await (await fetch(`${service.url}/retry-tasks/${taskId}`)).json()) as { createdAt: string | number };
    // A clock a day ahead would date the task a day ahead; the machine's dates it within the test's minutes.
    expect(Math.abs(new Date(task.createdAt).getTime() - Date.now())).toBeLessThan(10 * 60_000);
  });

  it('take effect through the test-only entry: the process stops at the fault point', async () => {
    const { service, downstream, taskId } = await serviceWithSwitches(true);
    await waitFor('the fault_pause line', () => service.logs.some((line) => line.event === 'fault_pause'));
    expect(service.logs.find((line) => line.event === 'fault_pause')).toMatchObject({ point: 'after-claim', taskId });
    expect(downstream.requests.size).toBe(0);
  });
});
