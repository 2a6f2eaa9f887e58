// A new PENDING task as the enqueuer makes one, for the benchmarks that write tasks to a store directly (no HTTP).

import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Makes tasks for one build: `TASK_FIELDS` and `targetKeyOf` are that build's (a `--baseline` build may know other
 * fields; one from before issue 8 has no field table: `TASK_FIELDS` undefined gives every field known here). Every
 * field of the build's table is set, in its row order: one this maker does not know is null if the table allows it,
 * else the maker throws, naming it.
 *
 * @example
 * const makeTask = newTaskMaker({ TASK_FIELDS, targetKeyOf, tenantId: 'default' });
 * makeTask({ targetUrl: 'http://127.0.0.1:9/x', dueAt: Date.now() + 3_600_000 });
 */
export function newTaskMaker({ TASK_FIELDS, targetKeyOf, tenantId }) {
  return ({ targetUrl, dueAt, now = dueAt, taskId = randomUUID(), idempotencyKey = `key-${taskId}`, ...fields }) => {
    const known = {
      tenantId,
      taskId,
      idempotencyKey,
      requestHash: '9f'.repeat(32), // a SHA-256 as the enqueuer gives it: lower-case hex
      targetUrl,
      targetKey: targetKeyOf(targetUrl),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"order":1}',
      bodyRef: null,
      policyId: 'default',
      policy: null,
      status: 'PENDING',
      attemptNumber: 0,
      runAttemptOffset: 0,
      runStartedAt: now,
      lastDelayMs: 0,
      nextAttemptAt: dueAt,
      createdAt: now,
      updatedAt: now,
      leaseOwner: null,
      leaseExpiresAt: null,
      fencingToken: 0,
      version: 1,
      cancelRequested: false,
      lastError: null,
      lastResponseStatus: null,
      deadLetterReason: null,
      traceContext: null,
      sensitiveBody: false,
      ...fields,
    };
    // A build without a field table (before issue 8) reads the fields it knows from the task and ignores the others.
    if (TASK_FIELDS === undefined) return known;
    const task = {};
    for (const [name, spec] of Object.entries(TASK_FIELDS)) {
      if (name in known) task[name] = known[name];
      else if (spec.nullable) task[name] = null;
      else throw new Error(`the benchmarks do not know the task field ${name} (not nullable): add it to lib/new-task.mjs`);
    }
    return task;
  };
}

/**
 * {@link newTaskMaker} for the build in `dist`, with task ids as that build's service makes them (UUIDv7,
 * time-ordered: the store's pages are written as the service's enqueues write them). A build from before issue 8 has
 * no field table or target key: its tasks are the fields known here, which its row mapping reads its own of.
 *
 * @example
 * const newTask = await builtTaskMaker(CURRENT_DIST);
 * newTask({ targetUrl: 'http://127.0.0.1:9/x', dueAt: Date.now() });
 */
export async function builtTaskMaker(dist, { tenantId = 'default' } = {}) {
  const load = (path) => import(pathToFileURL(join(dist, path)).href);
  const fieldTable = existsSync(join(dist, 'domain', 'task-fields.js'));
  const { TASK_FIELDS } = fieldTable ? await load('domain/task-fields.js') : { TASK_FIELDS: undefined };
  const { targetKeyOf } = fieldTable ? await load('domain/target-key.js') : { targetKeyOf: () => undefined };
  const { uuidv7 } = await load('tasks/uuid-v7.js');
  const makeTask = newTaskMaker({ TASK_FIELDS, targetKeyOf, tenantId });
  return (fields) => makeTask({ taskId: uuidv7(), ...fields });
}
