import { isLive, type Clock } from '@retryd/core';
import type { RetrydError } from '../domain/errors.js';
import type { AttemptLog, RetryTask } from '../domain/task.js';
import { callbackEndOf, callbackKeyOf, CALLBACK_EXCERPT_CHARS, type TaskEndedEvent } from '../domain/task-callback.js';
import type { OwedCallback, Store } from '../store/store.js';
import type { BatchEntryResult, EnqueueContext } from '../tasks/enqueuer.js';

/** Options of {@link CallbackRelay}. */
export interface CallbackRelayOptions {
  store: Pick<Store, 'callbacks' | 'getTask' | 'listAttempts'>;
  /** Enqueues a tenant's callbacks as tasks (`TaskService.enqueueBatch`): checked, inserted, and the engine woken. */
  enqueue: (tenantId: string, inputs: readonly unknown[], context?: EnqueueContext) => Promise<BatchEntryResult[]>;
  clock: Clock;
  /** How often an idle relay looks, in ms. Default 1,000 (an end this process's engine made is relayed at once: {@link CallbackRelay.nudge}). */
  intervalMs?: number;
  /** Callbacks per batch. Default 100. */
  batchSize?: number;
  /** Told of each owed callback that cannot become a task (its URL is no longer allowed, ...): it is dropped, and said why. */
  onRefused?: (owed: OwedCallback, error: RetrydError) => void;
  report: (error: unknown, context: { operation: string }) => void;
}

/** What became of one owed callback in a pass. */
type Relayed = 'made' | 'not_asked' | 'refused' | 'later';

/**
 * Makes the callbacks owed by ended tasks into tasks of their own. The store records an owed callback in the very
 * transition that ends a task with a `callback` (see `CallbackOutbox`); the relay reads them, earliest end first,
 * builds each one's `task.ended` event from the ended task and its last attempt, and enqueues it as a `POST` to the
 * callback's URL under its policy, with an idempotency key derived from the ended task and its version
 * ({@link callbackKeyOf}): relayed twice (two instances, or a crash before the owed callback was forgotten), it is
 * still one task. A callback task has no callback of its own, so a callback that dead-letters is a dead letter like
 * any other and calls nobody back.
 *
 * Every instance that runs workers relays; no lease is needed, since making a callback twice makes it once. An owed
 * callback is forgotten once its task exists, or when the end it was owed for was not asked for (`on`), or when the
 * callback is refused for good (its URL no longer allowed: `onRefused`); a failure that may pass (the store, a name
 * lookup) leaves it owed for the next look.
 */
export class CallbackRelay {
  readonly #options: CallbackRelayOptions;
  readonly #intervalMs: number;
  readonly #batchSize: number;
  #stopping = new AbortController();
  #wake = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(options: CallbackRelayOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? 1_000;
    this.#batchSize = options.batchSize ?? 100;
  }

  /** Starts looking, at once and then every interval. */
  start(): void {
    if (this.#loop !== undefined) return;
    this.#stopping = new AbortController();
    this.#loop = this.#run(this.#stopping.signal);
  }

  /** Looks again now rather than at the end of the interval (a task with a callback just ended here). */
  nudge(): void {
    this.#wake.abort();
  }

  /** Stops after the batch in progress; resolves then. What is still owed stays owed, for the next start or another instance. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#wake.abort();
    await this.#loop;
    this.#loop = undefined;
  }

  /** One pass: batches until one is not full, or not all of one could be settled now. Returns how many callbacks it made. */
  async pass(signal?: AbortSignal): Promise<number> {
    let made = 0;
    for (;;) {
      const owed = await this.#options.store.callbacks.owed(this.#batchSize);
      if (owed.length === 0) return made;
      const outcomes = await this.#relay(owed);
      made += outcomes.filter((o) => o === 'made').length;
      const done = owed.filter((_, i) => outcomes[i] !== 'later');
      await this.#options.store.callbacks.settle(done);
      // A batch not all settled: what is left failed for now, and is looked at again at the next look, not at once.
      if (owed.length < this.#batchSize || done.length < owed.length || signal?.aborted === true) return made;
    }
  }

  async #run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.#wake = new AbortController();
      try {
        await this.pass(signal);
      } catch (error) {
        this.#options.report(error, { operation: 'relay_callbacks' });
      }
      if (signal.aborted) return;
      await this.#options.clock.sleep(this.#intervalMs, this.#wake.signal).catch(() => undefined);
    }
  }

  /** What became of each owed callback, in order: the tenant's callbacks enqueued together. */
  async #relay(owed: readonly OwedCallback[]): Promise<Relayed[]> {
    const outcomes: Relayed[] = owed.map(() => 'later');
    const byTenant = new Map<string, { at: number[]; inputs: unknown[]; contexts: (string | null)[] }>();
    const tasks = await Promise.all(owed.map((o) => this.#read(o)));
    for (let i = 0; i < owed.length; i++) {
      const read = tasks[i];
      if (read === 'later') continue;
      if (read === undefined) {
        outcomes[i] = 'not_asked';
        continue;
      }
      const { tenantId } = owed[i] as OwedCallback;
      let group = byTenant.get(tenantId);
      if (group === undefined) byTenant.set(tenantId, (group = { at: [], inputs: [], contexts: [] }));
      group.at.push(i);
      group.inputs.push(read.input);
      group.contexts.push(read.traceContext);
    }
    for (const [tenantId, group] of byTenant) {
      let results: BatchEntryResult[];
      try {
        // One trace context per call: a batch carries one. The first's, when they all share it; else none.
        const trace = group.contexts.every((c) => c === group.contexts[0]) ? group.contexts[0] : null;
        results = await this.#options.enqueue(tenantId, group.inputs, trace === null || trace === undefined ? {} : { traceparent: trace });
      } catch (error) {
        this.#options.report(error, { operation: 'relay_callbacks' });
        continue;
      }
      results.forEach((result, k) => {
        const i = group.at[k] as number;
        if (result.kind !== 'error') outcomes[i] = 'made';
        else if (result.error.status >= 500) this.#options.report(result.error, { operation: 'relay_callbacks' });
        else {
          outcomes[i] = 'refused';
          this.#options.onRefused?.(owed[i] as OwedCallback, result.error);
        }
      });
    }
    return outcomes;
  }

  /**
   * The callback an owed entry asks for (its enqueue input), undefined when there is nothing to tell (the task is
   * gone, live again after a replay, has no callback, or its callback does not ask for this end), or `later` when the
   * store could not be read.
   */
  async #read(owed: OwedCallback): Promise<{ input: unknown; traceContext: string | null } | undefined | 'later'> {
    try {
      const task = await this.#options.store.getTask(owed.tenantId, owed.taskId);
      // A task replayed since it ended: its next end owes a callback of its own.
      if (task === undefined || task.callback === null || isLive(task.status)) return undefined;
      const end = callbackEndOf(task.status);
      if (end === undefined || !task.callback.on.includes(end)) return undefined;
      const last = task.attemptNumber === 0 ? undefined : await this.#lastAttempt(task);
      const input = {
        targetUrl: task.callback.url,
        method: 'POST',
        body: taskEndedEvent(task, last),
        idempotencyKey: callbackKeyOf(task.taskId, task.version),
        ...(task.callback.policyId === null ? {} : { policyId: task.callback.policyId }),
      };
      return { input, traceContext: task.traceContext };
    } catch (error) {
      this.#options.report(error, { operation: 'relay_callbacks' });
      return 'later';
    }
  }

  /** The task's last attempt log entry: its log is read to its end, a page at a time (a few entries, usually one page). */
  async #lastAttempt(task: RetryTask): Promise<AttemptLog | undefined> {
    let last: AttemptLog | undefined;
    let cursor: string | undefined;
    do {
      const page = await this.#options.store.listAttempts(task.tenantId, task.taskId, { limit: 1_000, ...(cursor === undefined ? {} : { cursor }) });
      last = page.items.at(-1) ?? last;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return last;
  }
}

/** The event a callback tells of an ended task and its last attempt (if it made one). Pure. */
export function taskEndedEvent(task: RetryTask, last: AttemptLog | undefined): TaskEndedEvent {
  const snippet = last?.responseBodySnippet ?? null;
  return {
    type: 'task.ended',
    taskId: task.taskId,
    idempotencyKey: task.idempotencyKey,
    status: task.status,
    reason: task.deadLetterReason,
    attempts: task.attemptNumber,
    endedAt: task.updatedAt,
    lastResponse:
      last === undefined
        ? null
        : { status: last.responseStatus, excerpt: snippet === null ? null : snippet.slice(0, CALLBACK_EXCERPT_CHARS) },
    lastError: task.lastError,
  };
}
