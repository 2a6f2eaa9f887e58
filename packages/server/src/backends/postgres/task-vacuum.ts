import { clearLongTimer, setLongTimer } from '@retryd/core';
import type pg from 'pg';

/** Options of {@link TaskVacuum}. */
export interface TaskVacuumOptions {
  /** How often to look, in ms; 0 turns the vacuum off. */
  intervalMs: number;
  /** Rows changed since the last vacuum below which a look does nothing (an idle store is left alone). */
  minChanges: number;
  /** A vacuum that failed. Lacking the privilege (SQLSTATE 42501) also turns the vacuum off. */
  onError: (error: Error) => void;
}

/**
 * Vacuums the `tasks` and `target_queues` tables of one schema every few seconds while tasks change, so that claims
 * stay fast, and `attempts` too once tasks were deleted (retention), so that the store stays flat.
 *
 * Every claim and every retry rewrites a task row, and PostgreSQL leaves the old version and its index entries
 * behind until a vacuum. The claim reads `tasks_due` from its start, where the entries of tasks claimed since the
 * last vacuum lie: without one, each claim walks more of them than the one before. Autovacuum wakes once a minute
 * per database by default (`autovacuum_naptime`), which is minutes of churn for a busy store: under W4's steady
 * 2,000 tasks/s the dispatch lag climbed from 20 to 85 ms (p50) within 40 s, and stayed near 10 ms with a vacuum
 * every few seconds.
 *
 * Several instances on one schema take turns: a session advisory lock is tried, never waited for. `VACUUM` takes
 * no lock that blocks reads or writes, and `SKIP_LOCKED` gives up at once rather than queue behind a DDL lock.
 */
export class TaskVacuum {
  readonly #pool: pg.Pool;
  readonly #schema: string;
  readonly #options: TaskVacuumOptions;
  #changes = 0;
  #deletions = 0;
  #timer: unknown;
  #running: Promise<unknown> | undefined;
  #off = false;

  constructor(pool: pg.Pool, schema: string, options: TaskVacuumOptions) {
    this.#pool = pool;
    this.#schema = schema;
    this.#options = options;
    this.#off = options.intervalMs <= 0;
  }

  /** Starts looking every `intervalMs` (the timer does not keep the process alive). */
  start(): void {
    if (this.#off || this.#timer !== undefined) return;
    this.#arm();
  }

  #arm(): void {
    // A timer set again after each look rather than `setInterval`, which runs an interval over 2^31 − 1 ms (24.8 days;
    // `?vacuum_interval_ms=` takes any whole number) every 1 ms instead.
    const timer = setLongTimer(this.#options.intervalMs, () => {
      this.#look();
      if (!this.#off) this.#arm();
    }) as { unref?: () => unknown };
    timer.unref?.();
    this.#timer = timer;
  }

  /** Counts task rows this store rewrote (claimed, completed) or deleted (purged): each leaves a dead version until a vacuum. */
  noteChanges(rows: number): void {
    this.#changes += rows;
  }

  /**
   * Counts whole tasks this store deleted (the purge, a delete by hand): their attempt rows are dead too, and the next
   * vacuum takes `attempts` along once they reach `minChanges`.
   */
  noteDeletions(tasks: number): void {
    this.#changes += tasks;
    this.#deletions += tasks;
  }

  /** Stops looking and waits for a vacuum in progress. */
  async close(): Promise<void> {
    this.#off = true;
    clearLongTimer(this.#timer);
    await this.#running;
  }

  #look(): void {
    if (this.#off || this.#running !== undefined || this.#changes < this.#options.minChanges) return;
    this.#changes = 0;
    const withAttempts = this.#deletions >= this.#options.minChanges;
    if (withAttempts) this.#deletions = 0;
    this.#running = this.vacuum(withAttempts)
      .catch((error: unknown) => {
        if ((error as { code?: unknown }).code === '42501') this.#off = true;
        this.#options.onError(error as Error);
      })
      .finally(() => {
        this.#running = undefined;
      });
  }

  /**
   * One vacuum, unless another instance's is in progress. Resolves false when it was skipped for that. `withAttempts`:
   * `attempts` too, whose rows only deletes leave dead (an attempt is written once): without it, a store that purges
   * grows by every attempt it deleted until autovacuum comes, and never stops where autovacuum is off (W8 on
   * PostgreSQL with `autovacuum = off`: 290,000 dead attempts and the size up 2 MiB every 10 s; with it, within 0.8%).
   */
  async vacuum(withAttempts = false): Promise<boolean> {
    const client = await this.#pool.connect();
    const lock = [`retryd.vacuum.${this.#schema}`];
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1::text, 0)) AS locked', lock);
      if (rows[0]?.locked !== true) return false;
      try {
        // The schema name is checked to be a plain identifier (connection.ts), so it is safe unquoted. The target
        // queues go along: a busy target's row is rewritten by most statements, and claims walk target_queues_ready.
        const attempts = withAttempts ? `, ${this.#schema}.attempts` : '';
        await client.query(`VACUUM (SKIP_LOCKED) ${this.#schema}.tasks, ${this.#schema}.target_queues${attempts}`);
        return true;
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtextextended($1::text, 0))', lock);
      }
    } finally {
      client.release();
    }
  }
}
