import type { RedisClient } from './connection.js';

/**
 * The wake-up channel: scripts PUBLISH `<instance id> <partition>` on `{prefix}:due` when they make a task due
 * (insert, release, replay, a reaped lease retried at once, a target's hold released); every store keeps one
 * dedicated subscriber connection on it and calls its `onDue` listeners for messages from other instances. Its own
 * messages only teach it partitions: the API wakes the engine of its own process directly.
 *
 * Pub/sub is fire-and-forget: a message sent while the subscriber is reconnecting is lost, so the listeners
 * are also called once the subscriber is back (work may have become due meanwhile). A wake-up is a hint; the
 * engine still reads the due index, and its own timer covers anything missed.
 */
export class DueChannel {
  readonly #listeners = new Set<() => void>();
  #wasReady = false;

  constructor(
    private readonly subscriber: RedisClient,
    private readonly channel: string,
    private readonly instanceId: string,
    private readonly onPartition: (partition: string) => void,
    private readonly onError: (error: unknown) => void,
  ) {
    subscriber.on('message', (from: string, message: string) => {
      if (from === this.channel) this.#receive(message);
    });
    subscriber.on('ready', () => {
      if (this.#wasReady) this.#notify();
      this.#wasReady = true;
    });
  }

  /** Connects and subscribes; resolves once messages are delivered. */
  async start(): Promise<void> {
    await this.subscriber.connect();
    await this.subscriber.subscribe(this.channel);
  }

  /** Adds a listener; returns the function that removes it. */
  add(listener: () => void): () => void {
    // A wrapper, so the same function added twice is two subscriptions, each removed by its own call.
    const entry = () => listener();
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  /** The message scripts publish. */
  message(partition: string): string {
    return `${this.instanceId} ${partition}`;
  }

  #receive(message: string): void {
    const space = message.indexOf(' ');
    if (space < 0) return;
    this.onPartition(message.slice(space + 1));
    if (message.slice(0, space) !== this.instanceId) this.#notify();
  }

  #notify(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (error) {
        this.onError(error);
      }
    }
  }
}
