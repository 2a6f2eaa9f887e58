import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RetryPolicy } from '@retryd/core';
import type { RetryTask } from '../src/domain/task.js';
import { Engine } from '../src/engine/engine.js';
import type { EngineOptions } from '../src/engine/engine-options.js';
import { parseAllowList, TargetGuard } from '../src/security/target-guard.js';
import type { Store } from '../src/store/store.js';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { makeTask } from './fixtures/tasks.js';
import { waitFor } from './wait-for.js';

export { reply, startServer, type SeenRequest, type TestServer } from './test-server.js';

/** A SQLite store on a fresh temporary file (WAL, synchronous=FULL), with its cleanup. */
export async function openTempStore(): Promise<{ store: SqliteStore; dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'retryd-engine-'));
  const store = new SqliteStore(join(dir, 'retryd.db'));
  await store.init();
  return {
    store,
    dir,
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the task reaches `status` and returns it. */
export function waitForStatus(store: Store, task: RetryTask, status: RetryTask['status'], timeoutMs?: number): Promise<RetryTask> {
  return waitFor(
    `task ${task.taskId} to become ${status}`,
    async () => {
      const current = await store.getTask(task.tenantId, task.taskId);
      return current?.status === status ? current : undefined;
    },
    timeoutMs,
  );
}

/** Short, deterministic retries for tests: fixed 5 ms, no jitter. */
export const FAST_POLICY: RetryPolicy = {
  maxAttempts: 5,
  backoffType: 'FIXED',
  initialDelayMs: 5,
  multiplier: 1,
  maxDelayMs: 5,
  jitterType: 'NONE',
};

/** A PENDING task due now that calls `url` on an inline policy. */
export function taskFor(url: string, policy: RetryPolicy = FAST_POLICY, overrides: Partial<RetryTask> = {}): RetryTask {
  const now = Date.now();
  return makeTask({ targetUrl: url, policy, policyId: null, nextAttemptAt: now, createdAt: now, updatedAt: now, ...overrides });
}

/** Inserts tasks and wakes the engine, as the API does on enqueue. */
export async function enqueue(store: Store, engine: Engine | undefined, ...tasks: RetryTask[]): Promise<RetryTask[]> {
  const results = await store.insertTasks(tasks);
  engine?.wake();
  return results.map((r) => r.task);
}

/** Every error the engine reported, with its context. */
export type Reported = { error: unknown; operation: string; taskId?: string | undefined }[];

/** The allowance of these tests, whose downstreams listen on 127.0.0.1: `--allow-targets 127.0.0.1/32`. */
export const loopbackGuard = (): TargetGuard => new TargetGuard({ allow: parseAllowList('127.0.0.1/32') });

/** An engine on `store` with test-friendly defaults (127.0.0.1 allowed), its reported errors collected. */
export function testEngine(store: Store, options: Partial<EngineOptions> = {}): { engine: Engine; errors: Reported } {
  const errors: Reported = [];
  const engine = new Engine({
    store,
    workerId: 'test-worker',
    attemptTimeoutMs: 2_000,
    connectTimeoutMs: 1_000,
    targetGuard: loopbackGuard(),
    onError: (error, context) => errors.push({ error, operation: context.operation, taskId: context.taskId }),
    ...options,
  });
  return { engine, errors };
}

type StoreMethod = { [K in keyof Store]: Store[K] extends (...args: never[]) => unknown ? K : never }[keyof Store];

/**
 * A fault-injecting decorator around a real store (Temporal-style persistence fault injection): a method can be made
 * to fail (`failing`) or to wait at a gate (`hold`) before it reaches the store. Given a clock, it also logs when
 * each call was made.
 */
export class FaultyStore {
  readonly store: Store;
  readonly failing = new Set<StoreMethod>();
  readonly calls = new Map<StoreMethod, number>();
  /** Every call with the time it was made (only when constructed with `now`). */
  readonly log: { method: StoreMethod; at: number }[] = [];
  private readonly gates = new Map<StoreMethod, Promise<void>>();

  constructor(inner: Store, now?: () => number) {
    this.store = new Proxy(inner, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        const method = prop as StoreMethod;
        return async (...args: unknown[]) => {
          this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
          if (now !== undefined) this.log.push({ method, at: now() });
          await this.gates.get(method);
          if (this.failing.has(method)) throw new Error(`injected fault: ${String(method)} failed`);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }

  /** When each call of `method` was made, in order. */
  timesOf(method: StoreMethod): number[] {
    return this.log.filter((call) => call.method === method).map((call) => call.at);
  }

  /** Holds every call of `method` until the returned function is called. */
  hold(method: StoreMethod): () => void {
    let open!: () => void;
    this.gates.set(method, new Promise<void>((resolve) => (open = resolve)));
    return () => {
      this.gates.delete(method);
      open();
    };
  }
}
