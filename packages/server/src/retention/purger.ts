import type { Clock } from '@retryd/core';
import type { BlobStore } from '../blobs/blob-store.js';
import { DEFAULT_TENANT } from '../domain/task.js';
import type { PurgedTask, Store } from '../store/store.js';

/** The `targetState` key (of the default tenant) of the purge's lease: which instance purges, until when. */
export const PURGE_LEASE_KEY = 'lease:purge';

/** Options of {@link Purger}. */
export interface PurgerOptions {
  store: Pick<Store, 'purgeExpired' | 'targetState'>;
  /** Where bodies too large for the task live; each purged task's body is deleted from it. Absent: none kept apart. */
  blobs?: Pick<BlobStore, 'delete'>;
  clock: Clock;
  /** This instance, as the lease names it. */
  owner: string;
  /** How often an idle purger looks, in ms. Default 10,000. */
  intervalMs?: number;
  /**
   * How soon it looks again after a pass that deleted tasks, in ms (at most `intervalMs`). Default 1,000: tasks that
   * expire steadily are deleted about a second after their time, not up to an interval after it (W8 on Redis: the
   * store rose by 10 MiB, 13%, each time a pass caught up and the purge then rested 10 s).
   */
  busyIntervalMs?: number;
  /**
   * Tasks per batch (one store transaction or script). Default 100: SQLite's batch runs on the event loop (better-sqlite3
   * is synchronous), and a batch of 500 (about 17 ms) held dispatch for that long; 100 take a few ms, and a pass still
   * deletes thousands of tasks a second.
   */
  batchSize?: number;
  /** The pause between two full batches, in ms, so that dispatch gets the store between them. Default 20. */
  pauseMs?: number;
  /** Told of the tasks of each batch, once deleted (metrics, logs). */
  onPurged?: (tasks: readonly PurgedTask[]) => void;
  report: (error: unknown, context: { operation: string }) => void;
}

/** The lease as stored. */
interface PurgeLease {
  owner: string;
  until: number;
}

/**
 * Deletes the finished tasks whose retention has passed (`expiresAt`), with their attempt logs, idempotency keys and
 * bodies, in batches of `batchSize` with a pause between them, on one instance at a time: the instance holding the
 * purge lease (a compare-and-set record in the store's shared state, taken for three intervals and renewed at each
 * pass) purges; the others look again at their next interval, and take the lease over once it lapsed (the holder
 * stopped or died). A pass ends with a batch that was not full: what is left is not expired yet.
 */
export class Purger {
  private readonly intervalMs: number;
  private readonly busyIntervalMs: number;
  private readonly batchSize: number;
  private readonly pauseMs: number;
  private stopping = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(private readonly options: PurgerOptions) {
    this.intervalMs = options.intervalMs ?? 10_000;
    this.busyIntervalMs = Math.min(this.intervalMs, options.busyIntervalMs ?? 1_000);
    this.batchSize = options.batchSize ?? 100;
    this.pauseMs = options.pauseMs ?? 20;
  }

  /** Starts looking, at once and then every interval. */
  start(): void {
    if (this.loop !== undefined) return;
    this.stopping = new AbortController();
    this.loop = this.run(this.stopping.signal);
  }

  /** Stops after the batch in progress; resolves then. The lease is left to lapse (another instance takes it over). */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    this.loop = undefined;
  }

  /**
   * One pass, if this instance holds (or takes) the lease: batches until one is not full or `signal` aborts. Returns
   * how many tasks it deleted (0 when another instance holds the lease).
   */
  async pass(signal?: AbortSignal): Promise<number> {
    if (!(await this.takeLease())) return 0;
    // A function, not a narrowed property: the signal may abort during any await below.
    const stopped = () => signal?.aborted === true;
    let purged = 0;
    for (;;) {
      const batch = await this.options.store.purgeExpired(this.options.clock.now(), this.batchSize);
      purged += batch.length;
      await deletePurgedBodies(this.options.blobs, batch, this.options.report);
      if (batch.length > 0) this.options.onPurged?.(batch);
      if (batch.length < this.batchSize || stopped()) return purged;
      await this.options.clock.sleep(this.pauseMs, signal).catch(() => undefined);
      if (stopped()) return purged;
      // A long pass keeps the lease: another instance must not start beside it.
      if (!(await this.takeLease())) return purged;
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let purged = 0;
      try {
        purged = await this.pass(signal);
      } catch (error) {
        this.options.report(error, { operation: 'purge_expired' });
      }
      await this.options.clock.sleep(purged > 0 ? this.busyIntervalMs : this.intervalMs, signal).catch(() => undefined);
    }
  }

  /** Takes or renews the lease, compare-and-set; false when another instance holds one that has not lapsed. */
  private async takeLease(): Promise<boolean> {
    const state = this.options.store.targetState;
    const now = this.options.clock.now();
    const stored = await state.getTargetState(DEFAULT_TENANT, PURGE_LEASE_KEY);
    if (stored !== undefined) {
      const lease = parseLease(stored.value);
      if (lease !== undefined && lease.owner !== this.options.owner && lease.until > now) return false;
    }
    const lease: PurgeLease = { owner: this.options.owner, until: now + 3 * this.intervalMs };
    return state.putTargetState(DEFAULT_TENANT, PURGE_LEASE_KEY, stored?.version ?? 0, JSON.stringify(lease), now);
  }
}

/**
 * Deletes the bodies kept apart (`bodyRef`) of deleted tasks (the purge's, and those deleted by hand); one that fails
 * is reported (`purge_body`) and left: the task is gone either way. Without a blob store, none was kept apart.
 */
export async function deletePurgedBodies(
  blobs: Pick<BlobStore, 'delete'> | undefined,
  tasks: readonly PurgedTask[],
  report: PurgerOptions['report'],
): Promise<void> {
  if (blobs === undefined) return;
  for (const task of tasks) {
    if (task.bodyRef === null) continue;
    try {
      await blobs.delete(task.bodyRef);
    } catch (error) {
      report(error, { operation: 'purge_body' });
    }
  }
}

function parseLease(value: string): PurgeLease | undefined {
  try {
    const parsed = JSON.parse(value) as Partial<PurgeLease>;
    return typeof parsed.owner === 'string' && typeof parsed.until === 'number' ? { owner: parsed.owner, until: parsed.until } : undefined;
  } catch {
    return undefined;
  }
}
