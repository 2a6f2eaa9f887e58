// Where a networked backend names its failures: what a store class's methods throw (or reject with) goes through the
// backend's translation, so a driver's codes and messages (PostgreSQL's SQLSTATEs, ioredis's) become the port's typed
// errors (store-errors.ts) before anything above `backends/` sees them. A translation passes the port's own errors and
// anything it does not know (a bug, a constraint) through unchanged, so applying it twice is harmless, but not free:
// the wrapper below adds a closure and a `.catch` to every call. The main stores (PostgresStore, RedisStore) translate
// once, in the private `#run` every round trip goes through, and wrap only the few methods that reach the driver
// another way (start-up, shutdown); their smaller classes (access keys, blobs, sealing, callbacks) wrap every method.
// SQLite's calls are synchronous and its engine tests count on their order, so that store names its failures at the
// driver instead (backends/sqlite/errors.ts, `nameFailuresOf`), at no cost in ticks.

/** A backend's translation of what its driver threw into the port's errors. */
export type FailureTranslation = (error: unknown) => unknown;

/**
 * Makes methods of `storeClass` throw `translate(error)` instead of `error`, whether they throw or their promise
 * rejects: the methods named in `only`, or by default every function of its prototype (not its constructor, accessors
 * or `#private` methods). Called once per class, beside its definition.
 *
 * @example
 * translateFailures(PostgresAccessStore, postgresFailure);
 * translateFailures(PostgresStore, postgresFailure, ['init', 'close', 'whenListening']); // the rest go through #run
 */
export function translateFailures<T extends object>(
  storeClass: { prototype: T },
  translate: FailureTranslation,
  only?: readonly (keyof T & string)[],
): void {
  const prototype = storeClass.prototype as Record<string, unknown>;
  const names = only ?? Object.getOwnPropertyNames(prototype);
  for (const name of names) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    const method = descriptor?.value as unknown;
    if (name === 'constructor' || typeof method !== 'function') {
      if (only === undefined) continue;
      throw new TypeError(`Expected \`${name}\` to be a method of ${(storeClass as { name?: string }).name ?? 'the class'}.`);
    }
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
