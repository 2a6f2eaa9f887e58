import { describe, expect, it } from 'vitest';
import { SHARED_SCHEMAS } from '../src/api/schemas.js';
import { toTaskView } from '../src/api/views.js';
import { TASK_FIELD_NAMES, TASK_FIELD_SPECS, TASK_VIEW_FIELD_NAMES } from '../src/domain/task-fields.js';
import { taskAfterCompletion } from '../src/engine/applied-completion.js';
import { leasedTo } from '../src/tasks/hand-off.js';
import { startApi } from './api-harness.js';
import { T0, finalOutcome, makeTask } from './fixtures/tasks.js';

// The one definition of a task's fields (domain/task-fields.ts) and the forms derived from it agree.

describe('the task field definition', () => {
  it('names each column and each Redis hash field once, in snake case for SQL', () => {
    const columns = TASK_FIELD_SPECS.map((f) => f.column);
    expect(new Set(columns).size).toBe(columns.length);
    for (const f of TASK_FIELD_SPECS) expect(f.column).toBe(f.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    const hashFields = TASK_FIELD_SPECS.flatMap((f) => (f.redis === 'data' ? [] : [f.redis.hash]));
    expect(new Set(hashFields).size).toBe(hashFields.length);
    // Scripts move tasks between indexes by these: they must be in the hash, not in the JSON no script parses.
    for (const name of ['status', 'nextAttemptAt', 'leaseExpiresAt', 'fencingToken', 'version', 'targetKey', 'policyId'] as const) {
      expect(TASK_FIELD_SPECS.find((f) => f.name === name)?.redis).not.toBe('data');
    }
  });

  it('keeps a field that changes after insert out of the fixed part', () => {
    for (const f of TASK_FIELD_SPECS) if (f.changes === 'transitions') expect(f.redis).not.toBe('data');
  });

  it('builds every task literal in row order (one shape for the hot path)', async () => {
    const task = makeTask({ status: 'IN_FLIGHT', leaseOwner: 'w', leaseExpiresAt: T0 + 1, fencingToken: 1 });
    expect(Object.keys(task)).toEqual(TASK_FIELD_NAMES);
    expect(Object.keys(leasedTo(makeTask(), { indices: [0], workerId: 'w', leaseMs: 1_000 }, T0))).toEqual(TASK_FIELD_NAMES);
    const completion = { tenantId: task.tenantId, taskId: task.taskId, fencingToken: 1, next: finalOutcome(task, 'SUCCEEDED') };
    const applied = { kind: 'applied', taskId: task.taskId, status: 'SUCCEEDED', nextAttemptAt: null, version: 3, cancelRequested: false } as const;
    expect(Object.keys(taskAfterCompletion(task, completion, applied, T0))).toEqual(TASK_FIELD_NAMES);
    const api = await startApi();
    try {
      const { task: enqueued } = await api.service.enqueue('default', { targetUrl: 'https://api.example.com/x', method: 'POST' });
      expect(Object.keys(enqueued)).toEqual(TASK_FIELD_NAMES);
    } finally {
      await api.close();
    }
  });

  it('derives the API view and its schema from the fields marked for the API, every one always present', () => {
    const view = toTaskView(makeTask({ headers: { authorization: 'Bearer secret', 'x-a': '1' } }));
    expect(Object.keys(view)).toEqual(TASK_VIEW_FIELD_NAMES);
    expect(view.headers).toEqual({ authorization: '[REDACTED]', 'x-a': '1' });
    const schema = SHARED_SCHEMAS.find((s) => s.$id === 'Task') as unknown as { required: string[]; properties: Record<string, unknown> };
    expect(schema.required).toEqual(TASK_VIEW_FIELD_NAMES);
    // Besides the fields: `waiting`, which a read by id adds for a due task (it is not stored: it is read from its target).
    expect(Object.keys(schema.properties)).toEqual([...TASK_VIEW_FIELD_NAMES, 'waiting']);
    for (const internal of ['tenantId', 'requestHash', 'leaseOwner', 'fencingToken', 'version', 'traceContext']) {
      expect(TASK_VIEW_FIELD_NAMES).not.toContain(internal);
    }
  });
});
