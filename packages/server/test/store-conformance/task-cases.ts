import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { TASK_FIELD_NAMES } from '../../src/domain/task-fields.js';
import { InvalidCursorError } from '../../src/store/store-errors.js';
import { T0, makeTask, requestHashOf } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { insertAll } from './helpers.js';

export function taskCases(store: CurrentStore): void {
  it('inserts tasks and reads each back, field for field, by id and by idempotency key', async () => {
    const plain = makeTask();
    const rich = makeTask({
      // Secrets as the service stores them: sealed, and kept as references.
      headers: { authorization: { enc: 'v1:k1:c2VhbGVk' }, 'x-api-token': { ref: 'Bearer {{secret:API}}' }, 'x-trace': 'é ✓' },
      body: null,
      bodyRef: 'default/big-body',
      policyId: null,
      policy: {
        maxAttempts: 4,
        backoffType: 'LINEAR',
        initialDelayMs: 50,
        multiplier: 1,
        maxDelayMs: 500,
        jitterType: 'NONE',
        retryableStatusCodes: [503],
      },
      nextAttemptAt: T0 + 5_000,
      lastDelayMs: 123.456,
      traceContext: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      sensitiveBody: true,
    });
    expect(await store().insertTasks([plain, rich])).toEqual([
      { kind: 'inserted', task: plain },
      { kind: 'inserted', task: rich },
    ]);
    for (const task of [plain, rich]) {
      expect(await store().getTask(task.tenantId, task.taskId)).toEqual(task);
      // One object shape whichever store made the task: the fields in row order.
      expect(Object.keys((await store().getTask(task.tenantId, task.taskId)) ?? {})).toEqual(TASK_FIELD_NAMES);
      expect(await store().admin.getTaskByIdempotencyKey(task.tenantId, task.idempotencyKey)).toEqual(task);
    }
    expect(await store().getTask('default', randomUUID())).toBeUndefined();
    expect(await store().admin.getTaskByIdempotencyKey('default', 'no-such-key')).toBeUndefined();
    expect(await store().insertTasks([])).toEqual([]);
  });

  it("keeps a task's own timeouts through insert, claim and completion, and null where it has none", async () => {
    const own = makeTask({ attemptTimeoutMs: 1_800_000, connectTimeoutMs: 1 });
    const attemptOnly = makeTask({ attemptTimeoutMs: 200 });
    const connectOnly = makeTask({ connectTimeoutMs: 750, sensitiveBody: true });
    const none = makeTask();
    const tasks = [own, attemptOnly, connectOnly, none];
    await insertAll(store(), tasks);
    for (const task of tasks) {
      expect(await store().getTask(task.tenantId, task.taskId)).toEqual(task);
      expect(await store().admin.getTaskByIdempotencyKey(task.tenantId, task.idempotencyKey)).toEqual(task);
    }
    const claimed = await store().claimDue(T0, { limit: 10, leaseMs: 5_000, workerId: 'w1' });
    const timeoutsOf = (list: readonly { taskId: string; attemptTimeoutMs: number | null; connectTimeoutMs: number | null }[]) =>
      Object.fromEntries(list.map((t) => [t.taskId, [t.attemptTimeoutMs, t.connectTimeoutMs]]));
    const expected = timeoutsOf(tasks);
    expect(timeoutsOf(claimed)).toEqual(expected);
    const next = { status: 'SUCCEEDED', attemptNumber: 1, nextAttemptAt: null, runStartedAt: T0, lastDelayMs: 0, lastError: null, lastResponseStatus: 200, deadLetterReason: null, expiresAt: null } as const;
    const results = await store().completeAttempts(claimed.map((t) => ({ tenantId: t.tenantId, taskId: t.taskId, fencingToken: t.fencingToken, next })), T0 + 1);
    expect(results.map((r) => r.kind)).toEqual(claimed.map(() => 'applied'));
    const after = await Promise.all(tasks.map(async (t) => (await store().getTask(t.tenantId, t.taskId)) as (typeof tasks)[number]));
    expect(timeoutsOf(after)).toEqual(expected);
  });

  it('keeps a body as its UTF-8 text: U+0000, escapes as text, characters beyond the BMP, and a lone surrogate as U+FFFD', async () => {
    const kept = ['{"note":"é ✓ \\"q\\"","nested":{"a":[1,2]}}', 'nul\u0000in\u0000', 'pair \u{1F600} x', 'bs \\u0000 \\\u0000 /', '', 'ctl \u0001\t\n'];
    const tasks = kept.map((body) => makeTask({ body }));
    // A lone surrogate has no UTF-8 form: every store keeps the body as UTF-8, as the dispatcher sends it.
    const lone = makeTask({ body: 'lone \ud800 and \udc00 end' });
    await insertAll(store(), [...tasks, lone]);
    for (const task of tasks) expect((await store().getTask(task.tenantId, task.taskId))?.body).toBe(task.body);
    expect((await store().getTask(lone.tenantId, lone.taskId))?.body).toBe('lone \uFFFD and \uFFFD end');
  });

  it('takes task ids in one form only, a UUID in lower-case hex with hyphens, and finds nothing by another', async () => {
    for (const taskId of ['not-a-uuid', randomUUID().toUpperCase(), randomUUID().replaceAll('-', ''), `{${randomUUID()}}`]) {
      await expect(store().insertTasks([makeTask({ taskId })]), taskId).rejects.toThrow(/expected a UUID in lower-case hex with hyphens/);
    }
    // The whole call is refused: the valid task beside it is not inserted either.
    const beside = makeTask();
    await expect(store().insertTasks([beside, makeTask({ taskId: 'not-a-uuid' })])).rejects.toThrow(/expected a UUID/);
    expect(await store().getTask(beside.tenantId, beside.taskId)).toBeUndefined();
    const task = makeTask();
    await store().insertTasks([task]);
    // The same UUID spelled otherwise is not the task's id: every store compares ids exactly, as text.
    for (const taskId of [task.taskId.toUpperCase(), task.taskId.replaceAll('-', ''), 'not-a-uuid']) {
      const ref = { tenantId: task.tenantId, taskId };
      expect(await store().getTask(task.tenantId, taskId), taskId).toBeUndefined();
      expect(await store().cancelTask(ref, T0, T0 + 60_000), taskId).toEqual({ kind: 'not_found' });
      expect(await store().requestCancel(ref, T0), taskId).toEqual({ kind: 'not_found' });
      expect(await store().extendLease(task.tenantId, taskId, 0, T0), taskId).toBe(false);
      expect((await store().listAttempts(task.tenantId, taskId, { limit: 10 })).items, taskId).toEqual([]);
    }
    expect(await store().getTask(task.tenantId, task.taskId)).toEqual(task);
    // A listing cursor holds a task id too: one with an id of another form was not made by the listing.
    const forged = Buffer.from(JSON.stringify(['tasks', T0, 'not-a-uuid'])).toString('base64url');
    await expect(store().listTasks({ tenantId: task.tenantId, limit: 10, cursor: forged })).rejects.toThrow(InvalidCursorError);
  });

  it('hands the traceparent a task was enqueued with to every claim, and keeps it after an attempt', async () => {
    const traceContext = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const task = makeTask({ traceContext, nextAttemptAt: T0 });
    await store().insertTasks([task]);
    const [claimed] = await store().claimDue(T0, { limit: 1, leaseMs: 5_000, workerId: 'w1' });
    expect(claimed?.traceContext).toBe(traceContext);
    // A retry scheduled by the first attempt, claimed again in the same write: the next attempt's parent is the same.
    const next = {
      status: 'PENDING',
      attemptNumber: 1,
      nextAttemptAt: T0 + 1,
      runStartedAt: T0,
      lastDelayMs: 1,
      lastError: 'HTTP 503',
      lastResponseStatus: 503,
      deadLetterReason: null,
      expiresAt: null,
    } as const;
    const completion = { tenantId: task.tenantId, taskId: task.taskId, fencingToken: claimed?.fencingToken ?? 0, next };
    const { results, claimed: again } = await store().completeAndClaim([completion], T0 + 1, { limit: 1, leaseMs: 5_000, workerId: 'w2' });
    expect(results[0]?.kind).toBe('applied');
    // Whether the same write's claim takes a task its completion made due is up to the store (see completeAndClaim).
    const retried = again.length > 0 ? again : await store().claimDue(T0 + 1, { limit: 1, leaseMs: 5_000, workerId: 'w2' });
    expect(retried.map((t) => t.traceContext)).toEqual([traceContext]);
  });

  it('inserts only new tasks: a batch holding an ended one is refused whole, naming the field and the rule', async () => {
    const fresh = makeTask();
    for (const status of ['SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED'] as const) {
      const ended = makeTask({ status, nextAttemptAt: null, attemptNumber: 1 });
      await expect(store().insertTasks([fresh, ended])).rejects.toThrow(
        `Expected \`status\` of task ${ended.taskId} to be PENDING or IN_FLIGHT (insertTasks takes new tasks); got ${status}.`,
      );
      expect(await store().getTask('default', ended.taskId)).toBeUndefined();
    }
    expect(await store().getTask('default', fresh.taskId)).toBeUndefined();
  });

  it('inserts a key repeated within one batch once; the repeat is a duplicate carrying the stored task', async () => {
    const first = makeTask({ idempotencyKey: 'order-1' });
    const repeat = makeTask({ idempotencyKey: 'order-1', requestHash: requestHashOf('another request') });
    const other = makeTask();
    expect(await store().insertTasks([first, repeat, other])).toEqual([
      { kind: 'inserted', task: first },
      { kind: 'duplicate', task: first },
      { kind: 'inserted', task: other },
    ]);
    expect(await store().getTask('default', repeat.taskId)).toBeUndefined();
  });

  it('answers a key stored by an earlier batch with duplicate and the stored task, requestHash included', async () => {
    // Zero bytes at both ends: a store that keeps the hash as bytes must give back the same text, every digit.
    const stored = makeTask({ idempotencyKey: 'order-2', requestHash: `00${requestHashOf('request a').slice(2, -2)}00` });
    await insertAll(store(), [stored]);
    const again = makeTask({ idempotencyKey: 'order-2', requestHash: requestHashOf('request b') });
    const fresh = makeTask();
    expect(await store().insertTasks([again, fresh])).toEqual([
      { kind: 'duplicate', task: stored },
      { kind: 'inserted', task: fresh },
    ]);
  });

  it('answers insertTasksVisible, where the store has it, as insertTasks: the tasks readable when it answers, durable when `durable` resolves', async (ctx) => {
    const insertVisible = store().insertTasksVisible?.bind(store());
    // A store whose every insert is durable when it answers has no use for it (Redis): the enqueue then takes
    // insertTasks for every write.
    if (insertVisible === undefined) return ctx.skip();
    const stored = makeTask({ idempotencyKey: 'order-3' });
    await insertAll(store(), [stored]);
    // A hand-off: already leased to the local engine, as the enqueue inserts a task due now.
    const handedOff = makeTask({ status: 'IN_FLIGHT', leaseOwner: 'local-engine', leaseExpiresAt: T0 + 60_000, fencingToken: 1 });
    const repeat = makeTask({ idempotencyKey: handedOff.idempotencyKey });
    const again = makeTask({ idempotencyKey: 'order-3', requestHash: requestHashOf('request b') });
    const pending = makeTask();
    const { results, durable } = await insertVisible([handedOff, repeat, again, pending]);
    expect(results).toEqual([
      { kind: 'inserted', task: handedOff },
      { kind: 'duplicate', task: handedOff },
      { kind: 'duplicate', task: stored },
      { kind: 'inserted', task: pending },
    ]);
    expect(await store().getTask('default', handedOff.taskId)).toEqual(handedOff);
    expect(await store().getTask('default', pending.taskId)).toEqual(pending);
    await expect(durable).resolves.toBeUndefined();
    // It refuses what insertTasks refuses, and writes nothing of the call.
    const ended = makeTask({ status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 1 });
    const fresh = makeTask();
    await expect(insertVisible([fresh, ended])).rejects.toThrow(`Expected \`status\` of task ${ended.taskId} to be PENDING or IN_FLIGHT`);
    expect(await store().getTask('default', fresh.taskId)).toBeUndefined();
    expect(await insertVisible([])).toMatchObject({ results: [] });
  });

  it('inserts exactly one task when 50 callers insert the same key at once', async () => {
    const tasks = Array.from({ length: 50 }, () => makeTask({ idempotencyKey: 'same-key' }));
    const results = (await Promise.all(tasks.map((task) => store().insertTasks([task])))).flat();
    const inserted = results.filter((r) => r.kind === 'inserted');
    expect(inserted).toHaveLength(1);
    const winner = inserted[0]?.task.taskId;
    expect(results.every((r) => r.task.taskId === winner)).toBe(true);
    expect((await store().admin.countByStatus('default')).PENDING).toBe(1);
  });

  it('keeps tenants apart: one key in two tenants is two tasks, and the wrong tenant reads nothing', async () => {
    const a = makeTask({ tenantId: 'tenant-a', idempotencyKey: 'shared' });
    const b = makeTask({ tenantId: 'tenant-b', idempotencyKey: 'shared' });
    await insertAll(store(), [a, b]);
    expect(await store().admin.getTaskByIdempotencyKey('tenant-a', 'shared')).toEqual(a);
    expect(await store().admin.getTaskByIdempotencyKey('tenant-b', 'shared')).toEqual(b);
    expect(await store().getTask('tenant-b', a.taskId)).toBeUndefined();
    expect(await store().cancelTask({ tenantId: 'tenant-b', taskId: a.taskId }, T0 + 1, T0 + 1 + 60_000)).toEqual({ kind: 'not_found' });
    const page = await store().listTasks({ tenantId: 'tenant-a', limit: 10 });
    expect(page.items).toEqual([a]);
  });
}
