import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { clientConfig } from '../src/backends/postgres/connection.js';
import { loadMigrations, migrate } from '../src/backends/postgres/migrate.js';
import type { PostgresStore } from '../src/backends/postgres/postgres-store.js';
import { loadQueries } from '../src/backends/postgres/queries.js';
import type { RetryTask } from '../src/domain/task.js';
import type { TargetRef } from '../src/store/store.js';
import { LEASED_STATUS } from '../src/store/transition-guards.js';
import { T0, finalOutcome, makeTask, retryOutcome } from './fixtures/tasks.js';
import { POSTGRES_URL, freshSchema, olderTaskRecords, postgresInstances, withClient } from './postgres-harness.js';
import { waitFor } from './wait-for.js';

/** claim-due.sql's $7-$12 (the claim's rooms): none. */
const NO_ROOMS = [null, null, null, null, null, null];

// The PostgreSQL store's target limits (004-target-limits.sql, claim-due.sql) where the conformance suite cannot see:
// several instances spending one bucket and one set of in-flight slots at once, the lock that makes them exact, the
// unlimited path that takes no lock, and the migration of a store made by 003.

const instances = postgresInstances();

const R = 'https://rate.example.com';
const C = 'https://slots.example.com';
const U = 'https://free.example.com';
const target = (targetKey: string): TargetRef => ({ tenantId: 'default', targetKey });
const tasksFor = (origin: string, n: number, due = T0) =>
  Array.from({ length: n }, (_, i) => makeTask({ targetUrl: `${origin}/hook`, nextAttemptAt: due + i / 1_000 }));
const done = (task: RetryTask) => ({ ...task, next: finalOutcome(task, 'SUCCEEDED') });

/** A client with the store's own settings, for transactions driven by hand. */
async function connect(store: PostgresStore): Promise<pg.Client> {
  const client = new pg.Client(clientConfig({ connectionString: POSTGRES_URL }, store.schema));
  await client.connect();
  return client;
}

/** Waits until some backend waits for a lock that `client`'s backend holds. */
async function blockedBy(store: PostgresStore, client: pg.Client): Promise<void> {
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
  await waitFor(
    `a statement to wait for a lock of backend ${pid}`,
    () =>
      withClient(store.schema, async (probe) => {
        const { rows } = await probe.query('SELECT pid FROM pg_stat_activity WHERE $1::integer = ANY (pg_blocking_pids(pid))', [pid]);
        return rows.length > 0;
      }),
  );
}

describe('PostgresStore target limits across instances', () => {
  it('two instances claiming at once from their own pools never exceed a shared rate limit or in-flight limit', async () => {
    const [one, two] = await instances(2);
    if (one === undefined || two === undefined) throw new Error('expected two stores');
    await one.insertTasks([...tasksFor(R, 300), ...tasksFor(C, 300), ...tasksFor(U, 300)]);
    const [rate, burst, maxInFlight] = [40, 5, 4];
    await one.limitTarget(target(R), { ratePerSecond: rate, burst, maxInFlight: null }, T0);
    await two.limitTarget(target(C), { ratePerSecond: null, burst: null, maxInFlight }, T0);

    let fromR = 0;
    let fromU = 0;
    const inFlightC = new Map<string, RetryTask>();
    let mostInFlightC = 0;
    // Rounds 25 ms apart on a shared clock: in each, every pool's four connections claim at once, while the attempts
    // of C in flight at its start end, so completions race the claims too.
    for (let round = 0; round < 40; round++) {
      const now = T0 + 1 + round * 25;
      const ending = [...inFlightC.values()];
      const [claims] = await Promise.all([
        Promise.all(
          [one, two].flatMap((store, s) =>
            Array.from({ length: 4 }, (_, c) => store.claimDue(now, { limit: 8, leaseMs: 60_000, workerId: `w${s}-${c}` })),
          ),
        ),
        ending.length === 0 ? Promise.resolve([]) : two.completeAttempts(ending.map(done), now),
      ]);
      for (const task of ending) inFlightC.delete(task.taskId);
      for (const task of claims.flat()) {
        if (task.targetKey === R) fromR++;
        if (task.targetKey === U) fromU++;
        if (task.targetKey === C) inFlightC.set(task.taskId, task);
      }
      // The bucket: the burst, then one token every 25 ms; the claims of a round all see the same clock.
      expect(fromR, `round ${round}`).toBeLessThanOrEqual(burst + Math.floor(((now - T0 - 1) * rate) / 1_000));
      mostInFlightC = Math.max(mostInFlightC, inFlightC.size);
      expect(inFlightC.size, `round ${round}`).toBeLessThanOrEqual(maxInFlight);
      expect((await one.admin.getTarget(target(C), now))?.inFlight).toBe(inFlightC.size);
    }
    // Exact, not merely under the limits: every token and every free slot was spent, and the unlimited target drained.
    expect(fromR).toBe(burst + Math.floor((39 * 25 * rate) / 1_000));
    expect(mostInFlightC).toBe(maxInFlight);
    expect(fromU).toBe(300);
  });

  it('spends what a claim left while another waited for the queue, though its snapshot was taken before that claim ended', async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    await store.insertTasks([...tasksFor(R, 10), ...tasksFor(C, 10)]);
    await store.limitTarget(target(R), { ratePerSecond: 1, burst: 3, maxInFlight: null }, T0);
    await store.limitTarget(target(C), { ratePerSecond: null, burst: null, maxInFlight: 3 }, T0);
    const queries = await loadQueries();
    const other = await connect(store);
    try {
      // The other instance's claim holds both queue rows, uncommitted: two tasks of each, so neither is throttled.
      await other.query('BEGIN');
      const first = await other.query<{ target_key: string }>(queries['claim-due'].text, [T0 + 1, 4, 'x', T0 + 60_001, null, null, ...NO_ROOMS]);
      expect(first.rows.map((row) => row.target_key)).toEqual([R, C, R, C]);
      // This claim starts (its snapshot shows all 20 tasks PENDING) and waits for the rows.
      const waiting = store.claimDue(T0 + 2, { limit: 20, leaseMs: 60_000, workerId: 'w' });
      await blockedBy(store, other);
      await other.query('COMMIT');
      // It spends what the other left: one token of three, one slot of three. Counted in its own snapshot, it
      // would have seen three tokens and no task in flight.
      expect((await waiting).map((t) => t.targetKey)).toEqual([R, C]);
    } finally {
      await other.end();
    }
    expect(await store.admin.getTarget(target(C), T0 + 2)).toMatchObject({ inFlight: 3, throttledUntil: T0 + 60_001 });
    // Less than a token left: throttled until the next one, 999 ms on (1.001 tokens at T0 + 2, one spent).
    expect((await store.admin.getTarget(target(R), T0 + 2))?.throttledUntil).toBeCloseTo(T0 + 1_001, 6);
  });

  it('takes no lock on an unlimited queue: claims and completions go on while another statement holds its row', async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    await store.insertTasks(tasksFor(U, 4));
    const [first] = await store.claimDue(T0, { limit: 1, leaseMs: 60_000, workerId: 'w' });
    if (first === undefined) throw new Error('expected a claim');
    const other = await connect(store);
    try {
      await other.query('BEGIN');
      await other.query('SELECT FROM target_queues WHERE target_key = $1 FOR UPDATE', [U]);
      // Neither waits for the row: the claim spends no bucket, and a success leaves the queue row alone.
      expect(await store.claimDue(T0 + 1, { limit: 2, leaseMs: 60_000, workerId: 'w' })).toHaveLength(2);
      expect((await store.completeAttempts([done(first)], T0 + 2))[0]?.kind).toBe('applied');
      await other.query('COMMIT');
    } finally {
      await other.end();
    }
  });

  it('calls target_rooms only from a claim that considers a limited queue', async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    await store.insertTasks([...tasksFor(U, 2), ...tasksFor(R, 2, T0 + 1_000)]);
    await store.limitTarget(target(R), { ratePerSecond: 10, burst: 1, maxInFlight: null }, T0);
    const queries = await loadQueries();
    const calls = (now: number) =>
      withClient(
        store.schema,
        async (client) => {
          await client.query("SET track_functions = 'all'");
          await client.query('BEGIN');
          const claimed = await client.query<{ target_key: string }>(queries['claim-due'].text, [now, 10, 'w', now + 60_000, null, null, ...NO_ROOMS]);
          const { rows } = await client.query<{ calls: number }>(
            "SELECT calls FROM pg_stat_xact_user_functions WHERE schemaname = current_schema() AND funcname = 'target_rooms'",
          );
          await client.query('ROLLBACK');
          return { claimed: claimed.rows.map((row) => row.target_key), calls: rows[0]?.calls ?? 0 };
        },
        'store',
      );
    // R is not due yet: the claim meets U alone.
    expect(await calls(T0 + 1)).toEqual({ claimed: [U, U], calls: 0 });
    expect(await calls(T0 + 1_001)).toEqual({ claimed: [U, R, U], calls: 1 });
  });

  it('neither credits nor debits the bucket for a claim from an instance whose clock is behind', async () => {
    const [ahead, behind] = await instances(2);
    if (ahead === undefined || behind === undefined) throw new Error('expected two stores');
    await ahead.insertTasks(tasksFor(R, 20));
    await ahead.limitTarget(target(R), { ratePerSecond: 10, burst: 5, maxInFlight: null }, T0);
    const claim = (store: PostgresStore, now: number, limit: number) =>
      store.claimDue(now, { limit, leaseMs: 60_000, workerId: 'w' }).then((tasks) => tasks.length);
    expect(await claim(ahead, T0 + 1_000, 2)).toBe(2);
    // 500 ms behind: the three tokens left, no more, no fewer.
    expect(await claim(behind, T0 + 500, 10)).toBe(3);
    // The bucket was counted at T0 + 1000: one token 100 ms later.
    expect(await claim(ahead, T0 + 1_099, 10)).toBe(0);
    expect(await claim(ahead, T0 + 1_100, 10)).toBe(1);
  });

  it('frees a slot for the next claim when an attempt ends, and only then, on every instance', async () => {
    const [one, two] = await instances(2);
    if (one === undefined || two === undefined) throw new Error('expected two stores');
    await one.insertTasks(tasksFor(C, 5));
    await one.limitTarget(target(C), { ratePerSecond: null, burst: null, maxInFlight: 2 }, T0);
    const held = await one.claimDue(T0 + 1, { limit: 10, leaseMs: 60_000, workerId: 'w' });
    expect(held).toHaveLength(2);
    // At its limit, the queue waits for an attempt to end (its earliest lease expiry bounds the wait).
    expect(await two.nextDueAt()).toBe(T0 + 60_001);
    expect((await two.admin.getTarget(target(C), T0 + 1))?.throttledUntil).toBe(T0 + 60_001);
    const [a, b] = held as [RetryTask, RetryTask];
    await two.completeAttempts([{ ...a, next: retryOutcome(a, T0 + 50) }], T0 + 10);
    expect(await one.nextDueAt()).toBeLessThanOrEqual(T0 + 10);
    expect(await two.claimDue(T0 + 11, { limit: 10, leaseMs: 60_000, workerId: 'w' })).toHaveLength(1);
    expect(await one.claimDue(T0 + 12, { limit: 10, leaseMs: 60_000, workerId: 'w' })).toEqual([]);
    await one.releaseLeases([b], T0 + 20);
    expect(await two.claimDue(T0 + 21, { limit: 10, leaseMs: 60_000, workerId: 'w' })).toHaveLength(1);
  });
});

describe('PostgresStore migration 004 (target limits)', () => {
  it('migrates a store made by 001 to 003 in place: queues keep their hints and holds, and take limits', async () => {
    const schema = freshSchema();
    const pool = new pg.Pool({ ...clientConfig({ connectionString: POSTGRES_URL }, schema), max: 1 });
    const tasks = {
      due: tasksFor(R, 3, T0 - 10),
      held: tasksFor(C, 2, T0 - 20),
      later: tasksFor(U, 1, T0 + 60_000),
      leased: makeTask({ targetUrl: `${C}/x`, status: 'IN_FLIGHT', leaseOwner: 'w', leaseExpiresAt: T0 + 30_000, fencingToken: 1 }),
    };
    try {
      expect(await migrate(pool, schema, loadMigrations().filter((m) => m.version <= 3))).toEqual([1, 2, 3]);
      // Rows as a store at 003 kept them: every column by name, the body as its JSON value.
      const records = olderTaskRecords([...tasks.due, ...tasks.held, ...tasks.later, tasks.leased]);
      await pool.query('INSERT INTO tasks SELECT * FROM json_populate_recordset(NULL::tasks, $1::json)', [records]);
      await pool.query(
        `INSERT INTO target_queues (tenant_id, target_key, next_due_at, held_until, version) VALUES
           ('default', $1, ${T0 - 10}, NULL, 3), ('default', $2, ${T0 - 20}, ${T0 + 5_000}, 1), ('default', $3, ${T0 + 60_000}, NULL, 0)`,
        [R, C, U],
      );
    } finally {
      await pool.end();
    }

    const [store] = await instances(1, schema);
    if (store === undefined) throw new Error('expected a store');
    const queues = await withClient(schema, async (client) =>
      (await client.query('SELECT target_key, next_due_at, held_until, version, ready_at, rate_per_second, max_in_flight, throttled_until FROM target_queues ORDER BY target_key')).rows,
    'store');
    expect(queues).toEqual([
      { target_key: U, next_due_at: T0 + 60_000, held_until: null, version: 0, ready_at: T0 + 60_000, rate_per_second: null, max_in_flight: null, throttled_until: null },
      { target_key: R, next_due_at: T0 - 10, held_until: null, version: 3, ready_at: T0 - 10, rate_per_second: null, max_in_flight: null, throttled_until: null },
      { target_key: C, next_due_at: T0 - 20, held_until: T0 + 5_000, version: 1, ready_at: T0 + 5_000, rate_per_second: null, max_in_flight: null, throttled_until: null },
    ]);
    // The migrated queues claim as before, take limits, and count the task leased before the migration.
    expect(await store.nextDueAt()).toBe(T0 - 10);
    await store.limitTarget(target(R), { ratePerSecond: 1, burst: 2, maxInFlight: null }, T0);
    await store.limitTarget(target(C), { ratePerSecond: null, burst: null, maxInFlight: 2 }, T0);
    expect((await store.claimDue(T0, { limit: 10, leaseMs: 60_000, workerId: 'w' })).map((t) => t.targetKey)).toEqual([R, R]);
    expect(await store.nextDueAt()).toBe(T0 + 1_000);
    expect((await store.claimDue(T0 + 5_000, { limit: 10, leaseMs: 60_000, workerId: 'w' })).map((t) => t.targetKey)).toEqual([R, C]);
    expect(await store.admin.getTarget(target(C), T0 + 5_000)).toMatchObject({ inFlight: 2, dueTasks: 1, maxInFlight: 2, heldUntil: null });
    expect((await store.admin.listTargets('default', { limit: 10 }, T0)).items.map((t) => t.targetKey)).toEqual([U, R, C]);
  });

  it("writes out core's leased status in target_rooms, as 001 does in the index predicates", async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    const definition = await withClient(store.schema, async (client) => {
      const { rows } = await client.query<{ def: string }>("SELECT pg_get_functiondef('target_rooms'::regproc) AS def");
      return rows[0]?.def ?? '';
    });
    expect(definition).toContain(`t.status = '${LEASED_STATUS}'::text`);
  });
});
