/**
 * A shallow copy of `source` with the properties of `extra` set over it: what `{ ...source, ...extra }` means, built
 * another way. On Node 20 (V8 11) a spread copy that gains a property its source lacked (`{ ...init, signal }`) gets
 * a map of its own, so every later read of the copy misses its inline caches: undici reading a `RequestInit`, or
 * `retry` reading its options, measured at 1.5–3 µs per object, more than all the rest of a retrying call.
 * `Object.assign` onto a fresh literal makes ordinary maps (about 50 ns).
 *
 * @example
 * ```ts
 * const attemptInit = copyWith(init, { signal: context.signal });
 * ```
 */
export function copyWith<T extends object>(source: T, extra: Partial<T>): T {
  return Object.assign({}, source, extra);
}
