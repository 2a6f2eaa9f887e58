import pg from 'pg';
import { storeRetryDelay } from '../../store/store-retry-delay.js';

/**
 * The receiving half of cross-instance wake-ups: one dedicated connection that `LISTEN`s on the schema's channel
 * while anyone is subscribed, and calls every subscriber on each notification.
 *
 * A pooled connection cannot listen (it is handed to other calls), hence a client of its own. When that
 * connection breaks (server restarted, network lost), it reconnects by itself, waiting the service's jittered
 * back-off between tries (`storeRetryDelay`: 50 ms up to 5 s, so instances do not reconnect in lockstep), and on
 * success calls every subscriber once: notifications sent while it was away are lost, and a spurious wake-up costs
 * one empty claim. Errors go to `onError`, never to an unhandled 'error' event.
 */
export class DueListener {
  readonly #config: pg.ClientConfig;
  readonly #channel: string;
  readonly #onError: (error: Error) => void;
  /** Each subscription is its own entry, so one function subscribed twice is called twice and removed once. */
  readonly #listeners = new Set<{ listener: (dueAt?: number) => void }>();
  #client: pg.Client | undefined;
  /** True while the LISTEN is in place. */
  #ready = false;
  /** Callers of {@link listening} waiting for the LISTEN. */
  #waiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  #retry: NodeJS.Timeout | undefined;
  /** Reconnects tried since the LISTEN was last in place, and the last wait before one. */
  #reconnects = 0;
  #delayMs = 0;
  #closed = false;

  constructor(config: pg.ClientConfig, channel: string, onError: (error: Error) => void) {
    this.#config = config;
    this.#channel = channel;
    this.#onError = onError;
  }

  /**
   * Calls `listener` on every notification until the returned function is called, with the due time it carries (an
   * insert's earliest PENDING task, epoch ms), or none (other notifiers, and a reconnect: work may be due now).
   */
  subscribe(listener: (dueAt?: number) => void): () => void {
    const entry = { listener };
    this.#listeners.add(entry);
    if (this.#client === undefined && this.#retry === undefined) this.#connect(false);
    return () => {
      this.#listeners.delete(entry);
      if (this.#listeners.size === 0) void this.#disconnect();
    };
  }

  /**
   * Resolves once the LISTEN is in place: at once when it is, else after the connection (or the next reconnect)
   * succeeds. Rejects when nobody is subscribed, or when the last subscriber leaves or `close()` is called first.
   */
  listening(): Promise<void> {
    if (this.#ready) return Promise.resolve();
    if (this.#closed || this.#listeners.size === 0) {
      return Promise.reject(new Error('Nothing is subscribed to due notifications.'));
    }
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** Stops listening for good. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    await this.#disconnect();
  }

  #connect(reconnected: boolean): void {
    if (this.#closed || this.#listeners.size === 0) return;
    const client = new pg.Client(this.#config);
    this.#client = client;
    client.on('error', (error) => this.#report(error));
    client.on('notification', (message) => {
      if (message.channel === this.#channel) this.#notify(dueAtOf(message.payload));
    });
    client.on('end', () => this.#lost(client));
    const listening = (async () => {
      await client.connect();
      // The channel is built from a checked schema name: a plain lowercase identifier.
      await client.query(`LISTEN ${this.#channel}`);
    })();
    listening.then(
      () => {
        if (this.#client !== client) return;
        this.#ready = true;
        this.#reconnects = 0;
        this.#delayMs = 0;
        for (const waiter of this.#waiters.splice(0)) waiter.resolve();
        if (reconnected) this.#notify();
      },
      (error: unknown) => {
        this.#report(error);
        this.#lost(client);
        client.end().catch(() => undefined);
      },
    );
  }

  /** The connection ended or never came up: try again later, unless that was asked for. */
  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#ready = false;
    if (this.#closed || this.#listeners.size === 0 || this.#retry !== undefined) return;
    const delay = storeRetryDelay(++this.#reconnects, this.#delayMs);
    this.#delayMs = delay;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#connect(true);
    }, delay);
    // A pending reconnect alone must not keep the process alive.
    this.#retry.unref();
  }

  async #disconnect(): Promise<void> {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#ready = false;
    const error = new Error('Stopped listening for due notifications before the LISTEN was in place.');
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  #notify(dueAt?: number): void {
    for (const { listener } of [...this.#listeners]) {
      try {
        listener(dueAt);
      } catch (error) {
        this.#report(error);
      }
    }
  }

  #report(error: unknown): void {
    try {
      this.#onError(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A failing error hook must not break the listener.
    }
  }
}

/** A notification's due time (insert-tasks.sql: epoch ms as digits), or undefined when it carries none. */
function dueAtOf(payload: string | undefined): number | undefined {
  if (payload === undefined || payload === '') return undefined;
  const dueAt = Number(payload);
  return Number.isSafeInteger(dueAt) ? dueAt : undefined;
}
