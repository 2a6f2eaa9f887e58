// An experiment, not a layout retryd ships: a freshly migrated PostgreSQL schema's `tasks` table swapped for a copy
// declaratively partitioned by HASH (tenant_id) into N partitions, with the same columns, defaults, CHECK constraints,
// primary key, indexes (same names, same predicates), triggers and autovacuum settings (on each partition: a partitioned table
// has no storage of its own). See docs/stores.md, "PostgreSQL past one table", for why by tenant only: it is the one
// hash key that keeps both unique rules, (tenant_id, task_id) and (tenant_id, idempotency_key), since a partitioned
// table's unique indexes must hold its partition key.
//
// Only on an empty schema, right after `retryd migrate` and before `retryd serve`: the table's rows are not copied.
// `target_rooms` (011-task-queue-number.sql) is a SQL-standard function body that names `tasks` by oid; it is dropped
// and made again from its own definition over the new table.
//
// The benchmarks take it through `RETRYD_BENCH_PG_PARTITIONS=<N>` (lib/contenders/retryd.mjs): every PostgreSQL store
// they make is partitioned so. bench/service/pg-partitions.mjs runs W1, W2 and W4 with and without it.

import { spawnSync } from 'node:child_process';
import { withPostgres } from './servers.mjs';
import { CLI } from './retryd-service.mjs';

/** The partition count asked for by `RETRYD_BENCH_PG_PARTITIONS`, or undefined for the single table. */
export function partitionsFromEnv() {
  const raw = process.env.RETRYD_BENCH_PG_PARTITIONS;
  if (raw === undefined || raw === '' || raw === '0') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 2) throw new Error(`RETRYD_BENCH_PG_PARTITIONS must be an integer ≥ 2, got ${raw}`);
  return n;
}

/**
 * Migrates the store at `storeUrl` with `cli` (`retryd migrate`), then swaps `schema.tasks` for `partitions` hash
 * partitions by tenant_id, in one transaction.
 */
export async function partitionTasks({ storeUrl, schema, partitions, base, cli = CLI }) {
  const migrated = spawnSync(process.execPath, [cli, 'migrate', '--store', storeUrl], { encoding: 'utf8' });
  if (migrated.status !== 0) throw new Error(`retryd migrate failed: ${migrated.stderr}`);
  await withPostgres(async (c) => {
    await c.query('BEGIN');
    await c.query(`SET LOCAL search_path = "${schema}"`);
    const one = async (sql, params) => (await c.query(sql, params)).rows;
    const count = await one('SELECT count(*)::int AS n FROM tasks');
    if (count[0].n !== 0) throw new Error(`${schema}.tasks holds rows: partition only a fresh schema`);
    const indexes = await one(
      `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
       FROM pg_index AS i WHERE i.indrelid = 'tasks'::regclass AND NOT i.indisprimary`,
    );
    const primary = await one(`SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'tasks'::regclass AND contype = 'p'`);
    const options = (await one(`SELECT reloptions FROM pg_class WHERE oid = 'tasks'::regclass`))[0].reloptions ?? [];
    const triggers = await one(`SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = 'tasks'::regclass AND NOT tgisinternal`);
    const functions = await one(
      `SELECT DISTINCT p.oid::regprocedure::text AS name, pg_get_functiondef(p.oid) AS def
       FROM pg_depend AS d JOIN pg_proc AS p ON p.oid = d.objid
       WHERE d.classid = 'pg_proc'::regclass AND d.refobjid = 'tasks'::regclass`,
    );
    for (const f of functions) await c.query(`DROP FUNCTION ${f.name}`);
    await c.query('ALTER TABLE tasks RENAME TO tasks_single');
    await c.query('CREATE TABLE tasks (LIKE tasks_single INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE) PARTITION BY HASH (tenant_id)');
    await c.query('DROP TABLE tasks_single');
    const withOptions = options.length === 0 ? '' : ` WITH (${options.join(', ')})`;
    for (let i = 0; i < partitions; i++) {
      await c.query(`CREATE TABLE tasks_p${i} PARTITION OF tasks FOR VALUES WITH (MODULUS ${partitions}, REMAINDER ${i})${withOptions}`);
    }
    for (const p of primary) await c.query(`ALTER TABLE tasks ADD CONSTRAINT ${p.conname} ${p.def}`);
    // Read before the rename, the definitions name `tasks`: now the partitioned table.
    for (const index of indexes) await c.query(index.def);
    for (const t of triggers) await c.query(t.def);
    // The function bodies were parsed against the old table; made again from their text, they bind to the new one.
    for (const f of functions) await c.query(f.def);
    await c.query('COMMIT');
  }, base);
}
