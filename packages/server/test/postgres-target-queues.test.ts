import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { clientConfig, dueChannel } from '../src/backends/postgres/connection.js';
import type { PostgresStore } from '../src/backends/postgres/postgres-store.js';
import { loadQueries } from '../src/backends/postgres/queries.js';
import { insertTaskValues } from '../src/backends/postgres/insert-records.js';
import type { RetryTask } from '../src/domain/task.js';
import { T0, makeTask, retryOutcome } from './fixtures/tasks.js';
import { POSTGRES_URL, dropSchemas, makeStore, withClient } from './postgres-harness.js';
import { waitFor } from './wait-for.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

/** claim-due.sql's $7-$12 (the claim's rooms): none. */
const NO_ROOMS = [null, null, null, null, null, null];

// The PostgreSQL store's target queues (003-targets.sql, claim-due.sql): what a claim reads, and why its hint
// is never late when statements race.

afterEach(dropSchemas);

const A = 'https://a.example.com';
const B = 'https://b.example.com';
const lease = { leaseMs: 60_000, workerId: 'w' };
const tasksFor = (origin: string, n: number, due = T0) =>
  Array.from({ length: n }, (_, i) => makeTask({ targetUrl: `${origin}/hook`, nextAttemptAt: due + i }));

/** One node of `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** Runs the claim under EXPLAIN ANALYZE and rolls it back: the plan's nodes and the rows it would have claimed. */
async function explainClaim(client: pg.Client, values: unknown[]): Promise<{ nodes: PlanNode[]; buffers: number }> {
  const queries = await loadQueries();
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${queries['claim-due'].text}`,
      values,
    );
    const plan = rows[0]?.['QUERY PLAN'][0].Plan;
    if (plan === undefined) throw new Error('no plan');
    return { nodes: nodesOf(plan), buffers: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'] };
  } finally {
    await client.query('ROLLBACK');
  }
}

/** Rows read from `tasks` by every scan of the plan (rows × loops). */
const taskRowsRead = (nodes: readonly PlanNode[]) =>
  nodes.filter((n) => n['Relation Name'] === 'tasks' && n['Node Type'].includes('Scan')).reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);

describe('PostgresStore claims through target queues', () => {
  it("does not visit a held target's 100,000 due tasks: the claim reads the same rows with and without them", async () => {
    await using store = makeStore();
    await store.init();
    await store.insertTasks(tasksFor(B, 5));
    const claim = [T0 + 10, 10, 'w', T0 + 60_010, null, null, ...NO_ROOMS];
    const plans = await withClient(
      store.schema,
      async (client) => {
        await client.query('ANALYZE');
        const before = await explainClaim(client, claim);
        await client.query(`INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES ('default', '${A}', ${T0 - 199_999})`);
        await client.query(`
          INSERT INTO tasks (tenant_id, task_id, idempotency_key, request_hash, target_url, queue_id, method, headers,
            status, attempt_number, run_attempt_offset, last_delay_ms, next_attempt_at, created_at, updated_at,
            fencing_token, version, cancel_requested)
          SELECT 'default', ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, 'held-' || n, 'h', '/hook', q.queue_id, 'POST', '{}', 'PENDING', 0, 0, 0,
            ${T0 - 200_000} + n, ${T0}, ${T0}, 0, 1, false
          FROM generate_series(1, 100000) AS n, (SELECT queue_id FROM target_queues WHERE target_key = '${A}') AS q`);
        await store.holdTarget({ tenantId: 'default', targetKey: A }, T0 + 3_600_000, T0);
        await client.query('ANALYZE');
        return { before, after: await explainClaim(client, claim) };
      },
      'store',
    );
    for (const { nodes } of [plans.before, plans.after]) {
      // The ready queues come from target_queues_ready: B alone; A's row is not even read.
      const ready = nodes.filter((n) => n['Index Name'] === 'target_queues_ready');
      expect(ready.map((n) => n['Actual Rows'])).toEqual([1]);
      expect(nodes.some((n) => n['Node Type'] === 'Seq Scan')).toBe(false);
      // Claimed: B's five tasks.
      expect(nodes[0]?.['Actual Rows']).toBe(5);
    }
    expect(taskRowsRead(plans.after.nodes)).toBe(taskRowsRead(plans.before.nodes));
    expect(taskRowsRead(plans.after.nodes)).toBeLessThan(30);
    // Pages touched: the same work, give or take a level of the now larger tasks_due index per probe.
    expect(plans.after.buffers).toBeLessThan(plans.before.buffers * 1.5 + 20);
    // And the store still claims B at once, and A once its hold ends.
    expect((await store.claimDue(T0 + 10, { limit: 10, ...lease })).map((t) => t.targetKey)).toEqual(Array<string>(5).fill(B));
    expect(await store.nextDueAt()).toBe(T0 + 3_600_000);
    expect(await store.claimDue(T0 + 3_600_000, { limit: 10, ...lease })).toHaveLength(10);
  });

  it('probes only as many ready queues as it serves (the walk is lazy), and each queue only at its head', async () => {
    await using store = makeStore();
    await store.init();
    await store.insertTasks(Array.from({ length: 40 }, (_, q) => tasksFor(`https://q${String(q).padStart(2, '0')}.example.com`, 3)).flat());
    const { nodes } = await withClient(store.schema, (client) => explainClaim(client, [T0 + 10, 4, 'w', T0 + 60_010, null, null, ...NO_ROOMS]), 'store');
    expect(nodes[0]?.['Actual Rows']).toBe(4);
    expect(nodes.find((n) => n['Index Name'] === 'target_queues_ready')?.['Actual Rows']).toBe(40);
    // The ring's probes (an index-only scan of tasks_due per queue reached) stop at the fourth ready queue.
    const probes = nodes.filter((n) => n['Index Name'] === 'tasks_due' && n['Node Type'] === 'Index Only Scan');
    expect(probes.map((n) => n['Actual Loops'])).toEqual([4]);
    expect(taskRowsRead(nodes)).toBeLessThan(40);
  });
});

/** A client with the store's own settings, for transactions driven by hand. */
async function connect(store: PostgresStore): Promise<pg.Client> {
  const { default: pg } = await import('pg');
  const client = new pg.Client(clientConfig({ connectionString: POSTGRES_URL }, store.schema));
  await client.connect();
  return client;
}

/** Waits until some backend waits for a lock that the backend `pid` holds. */
async function blockedBy(store: PostgresStore, pid: number): Promise<void> {
  await waitFor(
    `a statement to wait for a lock of backend ${pid}`,
    () =>
      withClient(store.schema, async (client) => {
        const { rows } = await client.query('SELECT pid FROM pg_stat_activity WHERE $1::integer = ANY (pg_blocking_pids(pid))', [pid]);
        return rows.length > 0;
      }),
  );
}

const queueOf = (store: PostgresStore, targetKey: string) =>
  withClient(store.schema, async (client) => {
    const { rows } = await client.query<{ next_due_at: number | null; version: number }>(
      'SELECT next_due_at, version FROM target_queues WHERE tenant_id = $1 AND target_key = $2',
      ['default', targetKey],
    );
    return rows[0];
  }, 'store');

describe('PostgresStore target queue hints under concurrency', () => {
  it("a task made PENDING while a claim refreshes its queue's hint is never left unclaimable", async () => {
    await using store = makeStore();
    await store.init();
    const queries = await loadQueries();
    const insert = (client: pg.Client, tasks: readonly RetryTask[]) =>
      client.query(queries['insert-tasks'].text, insertTaskValues(tasks, dueChannel(store.schema)));
    const [x] = tasksFor(A, 1, T0);
    await store.insertTasks([x as RetryTask]);
    const other = await connect(store);
    try {
      // 1. The insert holds the queue row (uncommitted) while a claim drains the queue: the claim's refresh skips
      //    the row instead of writing NULL over a hint that the insert is about to make cover its task.
      const y = makeTask({ targetUrl: `${A}/hook`, nextAttemptAt: T0 + 5 });
      await other.query('BEGIN');
      await insert(other, [y]);
      expect((await store.claimDue(T0 + 10, { limit: 10, ...lease })).map((t) => t.taskId)).toEqual([x?.taskId]);
      await other.query('COMMIT');
      expect(await store.nextDueAt()).toBe(T0 + 5);
      expect((await store.claimDue(T0 + 10, { limit: 10, ...lease })).map((t) => t.taskId)).toEqual([y.taskId]);
      expect((await queueOf(store, A))?.next_due_at).toBeNull();

      // 2. The claim's refresh holds the row (uncommitted, hint NULL) when a task arrives: the insert waits for the
      //    claim to commit, then lowers the hint from the value the claim wrote.
      const z = makeTask({ targetUrl: `${A}/hook`, nextAttemptAt: T0 + 20 });
      const w = makeTask({ targetUrl: `${A}/hook`, nextAttemptAt: T0 + 30 });
      await store.insertTasks([z]);
      await other.query('BEGIN');
      const claimed = await other.query(queries['claim-due'].text, [T0 + 25, 10, 'w', T0 + 60_025, null, null, ...NO_ROOMS]);
      expect(claimed.rows.map((row: { task_id: string }) => row.task_id)).toEqual([z.taskId]);
      const inserting = store.insertTasks([w]);
      const { rows } = await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await blockedBy(store, rows[0]?.pid ?? 0);
      await other.query('COMMIT');
      expect((await inserting)[0]?.kind).toBe('inserted');
      expect(await store.nextDueAt()).toBe(T0 + 30);
      expect((await store.claimDue(T0 + 30, { limit: 10, ...lease })).map((t) => t.taskId)).toEqual([w.taskId]);
    } finally {
      await other.end();
    }
  });

  it('raises the queue version with every statement that makes a task PENDING, even when the hint is already earlier', async () => {
    await using store = makeStore();
    await store.init();
    await store.insertTasks(tasksFor(A, 3, T0));
    const versions: number[] = [(await queueOf(store, A))?.version ?? -1];
    const bumped = async (what: string, change: () => Promise<unknown>) => {
      await change();
      const queue = await queueOf(store, A);
      expect(queue?.version, what).toBe((versions.at(-1) ?? 0) + 1);
      // The hint stays at T0: every change below makes a task due later than that.
      expect(queue?.next_due_at, what).toBe(T0);
      versions.push(queue?.version ?? -1);
    };
    await bumped('insert', () => store.insertTasks(tasksFor(A, 1, T0 + 1_000)));
    const [first, second] = await store.claimDue(T0 + 2, { limit: 2, ...lease });
    if (first === undefined || second === undefined) throw new Error('expected two claims');
    await bumped('retry', () => store.completeAttempts([{ ...first, next: retryOutcome(first, T0 + 500) }], T0 + 1));
    await bumped('release', () => store.releaseLeases([second], T0 + 2));
    const dead = makeTask({ targetUrl: `${A}/x`, status: 'FAILED', nextAttemptAt: null, deadLetterReason: 'permanent_status:400' });
    await insertStoredTasks(store, [dead]);
    await bumped('replay', () =>
      store.replayTask(dead, { expectedVersion: dead.version, runAttemptOffset: 0, runStartedAt: null, nextAttemptAt: T0 + 9, updatedAt: T0 + 9 }),
    );
    // Hand-offs and ends are not PENDING: no bump. Nor is a hold, nor a claim's refresh.
    const handedOff = makeTask({ targetUrl: `${A}/y`, status: 'IN_FLIGHT', leaseOwner: 'local', leaseExpiresAt: T0 + 60_000, fencingToken: 1 });
    await insertStoredTasks(store, [handedOff, { ...dead, taskId: randomUUID(), idempotencyKey: 'dead-2' }]);
    await store.holdTarget({ tenantId: 'default', targetKey: A }, T0 + 1, T0);
    expect((await queueOf(store, A))?.version).toBe(versions.at(-1));
  });
});
