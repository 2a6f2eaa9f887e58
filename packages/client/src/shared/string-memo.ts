/**
 * Remembers the answers of a pure function of one string, for the last few hundred strings: clients call a handful
 * of URLs over and over, and parsing one with `URL` costs about a microsecond a call. The memory is bounded: a caller
 * with endlessly many strings refills it rather than growing it.
 *
 * @example
 * ```ts
 * const originOf = memoByString((url) => new URL(url).origin);
 * originOf('https://api.example.com/orders/1'); // parsed once, then remembered
 * ```
 */
export function memoByString<T>(fn: (text: string) => T, limit = 512): (text: string) => T {
  const known = new Map<string, T>();
  return (text) => {
    const hit = known.get(text);
    if (hit !== undefined || known.has(text)) return hit as T;
    const value = fn(text);
    if (known.size >= limit) known.clear();
    known.set(text, value);
    return value;
  };
}
