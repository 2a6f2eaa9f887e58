// Where a networked backend names its failures: every method of its store classes hands what it throws (or rejects
// with) to the backend's translation, so a driver's codes and messages (PostgreSQL's SQLSTATEs, ioredis's) become the
// port's typed errors (store-errors.ts) before anything above `backends/` sees them. A translation passes the port's
// own errors and anything it does not know (a bug, a constraint) through unchanged, so applying it twice is harmless.
// The result of a method that returns a promise settles one microtask later: nothing next to a network round trip.
// SQLite's calls are synchronous and its engine tests count on their order, so that store names its failures at the
// driver instead (backends/sqlite/errors.ts, `nameFailuresOf`), at no cost in ticks.

/** A backend's translation of what its driver threw into the port's errors. */
export type FailureTranslation = (error: unknown) => unknown;

/**
 * Makes every method of `storeClass` (the functions of its prototype, not its constructor, accessors or `#private`
 * methods) throw `translate(error)` instead of `error`, whether it throws or its promise rejects. Called once per
 * class, beside its definition.
 *
 * @example
 * translateFailures(PostgresStore, postgresFailure);
 */
export function translateFailures(storeClass: { prototype: object }, translate: FailureTranslation): void {
  const prototype = storeClass.prototype as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    const method = descriptor?.value as unknown;
    if (name === 'constructor' || typeof method !== 'function') continue;
    const rethrow = (error: unknown): never => {
      throw translate(error);
    };
    Object.defineProperty(prototype, name, {
      ...descriptor,
      value: function translated(this: unknown, ...args: unknown[]): unknown {
        let result: unknown;
        try {
          result = (method as (...a: unknown[]) => unknown).apply(this, args);
        } catch (error) {
          rethrow(error);
        }
        return result instanceof Promise ? result.catch(rethrow) : result;
      },
    });
  }
}
