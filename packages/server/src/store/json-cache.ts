/**
 * Parses JSON columns through a small cache of frozen values, keyed by their text: the SQLite store's row mapping
 * and the PostgreSQL store's parser of `json` columns. Tasks enqueued together usually carry the same `headers` and
 * the same inline `policy`, so a claim of a hundred rows parses each distinct text once instead of a hundred times,
 * and the tasks share one object.
 *
 * Values are deeply frozen because they are shared: a caller that tried to change one task's headers would change
 * every task's; frozen, it throws instead. Texts longer than {@link JsonCacheOptions.maxTextLength} are parsed and
 * frozen without being kept, so large headers do not pin memory.
 */
export class JsonCache {
  readonly #values = new Map<string, unknown>();
  readonly #maxEntries: number;
  readonly #maxTextLength: number;

  constructor(options: JsonCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 256;
    this.#maxTextLength = options.maxTextLength ?? 4_096;
  }

  /** The value of `text`, parsed and deeply frozen. */
  parse<T>(text: string): T {
    let value = this.#values.get(text);
    if (value !== undefined) return value as T;
    value = deepFreeze(JSON.parse(text) as unknown);
    if (text.length <= this.#maxTextLength) {
      // Oldest first out: Map iterates in insertion order.
      if (this.#values.size >= this.#maxEntries) this.#values.delete(this.#values.keys().next().value as string);
      this.#values.set(text, value);
    }
    return value as T;
  }
}

/** Options of {@link JsonCache}. */
export interface JsonCacheOptions {
  /** Most distinct texts kept. Default 256. */
  maxEntries?: number;
  /** Longest text kept, in UTF-16 code units. Default 4 096. */
  maxTextLength?: number;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
