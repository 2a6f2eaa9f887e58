/**
 * One store read shared by scrapes: read at scrape time and kept for `cacheMs`, so that scrapes (several Prometheus
 * servers, a dashboard's refresh) cost the store at most one read per interval, and attempts none. Scrapes that
 * arrive during a read share it. A failed read is not cached: the last answer is dropped, not served stale.
 *
 * @example
 * ```ts
 * const counts = new ScrapeCache(() => store.admin.countByStatus(), () => clock.now(), 5_000);
 * await counts.read(); // reads the store
 * await counts.read(); // the same answer, for 5 s
 * ```
 */
export class ScrapeCache<T> {
  private value: T | undefined;
  private readAt = -Infinity;
  private reading: Promise<T> | undefined;

  /**
   * @param load The read, e.g. `() => store.admin.countByStatus()`.
   * @param now The clock that times the cache, epoch ms.
   * @param cacheMs How long one answer serves scrapes, in ms.
   */
  constructor(
    private readonly load: () => Promise<T>,
    private readonly now: () => number,
    private readonly cacheMs: number,
  ) {}

  /** The answer, at most `cacheMs` old; rejects when the read does. */
  async read(): Promise<T> {
    if (this.value !== undefined && this.now() - this.readAt < this.cacheMs) return this.value;
    this.reading ??= this.load()
      .then(
        (value) => {
          this.value = value;
          this.readAt = this.now();
          return value;
        },
        (error: unknown) => {
          this.value = undefined;
          throw error;
        },
      )
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
