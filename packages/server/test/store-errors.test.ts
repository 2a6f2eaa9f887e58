import { describe, expect, it } from 'vitest';
import { postgresFailure } from '../src/backends/postgres/errors.js';
import { redisFailure } from '../src/backends/redis/errors.js';
import { sqliteFailure } from '../src/backends/sqlite/errors.js';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { translateFailures } from '../src/store/failure-boundary.js';
import { StoreFullError, StoreUnavailableError, isStoreUnavailable } from '../src/store/store-errors.js';
import { storeFailure } from '../src/tasks/store-failure.js';

// Each backend names its driver's failures as the port's errors (store/store-errors.ts); above `backends/`, only the
// port's `STORE_UNAVAILABLE` is read.

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe("the backends' failures as the port's errors", () => {
  it('SQLite: a locked, failing or closed database is unavailable, a full disk full, a constraint neither', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_IOERR_FSYNC', 'SQLITE_LOCKED', 'SQLITE_READONLY', 'EIO']) {
      expect(sqliteFailure(coded(code)), code).toBeInstanceOf(StoreUnavailableError);
    }
    for (const code of ['SQLITE_FULL', 'ENOSPC']) expect(sqliteFailure(coded(code)), code).toBeInstanceOf(StoreFullError);
    expect(sqliteFailure(new TypeError('The database connection is not open'))).toBeInstanceOf(StoreUnavailableError);
    for (const code of ['SQLITE_CONSTRAINT_DATATYPE', 'SQLITE_ERROR', 'ERR_X']) expect(isStoreUnavailable(sqliteFailure(coded(code))), code).toBe(false);
    expect(sqliteFailure(new TypeError('x is undefined'))).toBeInstanceOf(TypeError);
  });

  it('PostgreSQL: an unreachable, shutting down or exhausted server is unavailable, a full disk full, a constraint neither', () => {
    for (const code of ['ECONNREFUSED', '57P01', '08006', '53300']) expect(postgresFailure(coded(code)), code).toBeInstanceOf(StoreUnavailableError);
    expect(postgresFailure(coded('53100'))).toBeInstanceOf(StoreFullError);
    expect(postgresFailure(new Error('Connection terminated unexpectedly'))).toBeInstanceOf(StoreUnavailableError);
    for (const code of ['23505', '42P01']) expect(isStoreUnavailable(postgresFailure(coded(code))), code).toBe(false);
  });

  it('Redis: a refused connection, a command not sent or out of retries is unavailable', () => {
    expect(redisFailure(coded('ECONNREFUSED'))).toBeInstanceOf(StoreUnavailableError);
    expect(redisFailure(new Error('Connection is closed.'))).toBeInstanceOf(StoreUnavailableError);
    expect(redisFailure(Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' }))).toBeInstanceOf(
      StoreUnavailableError,
    );
    expect(redisFailure(new Error('ERR unknown command'))).not.toBeInstanceOf(StoreUnavailableError);
  });

  it("keeps the driver's message and code, and its error as the cause", () => {
    const driver = coded('SQLITE_BUSY', 'database is locked');
    const named = sqliteFailure(driver) as StoreUnavailableError;
    expect(named).toMatchObject({ code: 'STORE_UNAVAILABLE', reason: 'SQLITE_BUSY', message: 'database is locked', cause: driver });
    expect(storeFailure(named, 'sqlite', 'enqueue').detail).toBe(
      'The sqlite store could not enqueue (SQLITE_BUSY): database is locked. ' +
        'Try again later; an enqueue sent again with the same idempotency key cannot create a second task.',
    );
  });

  it("answers the port's STORE_UNAVAILABLE and the system's socket and file codes above the backends, never a driver's", () => {
    for (const error of [new StoreUnavailableError('down'), coded('STORE_UNAVAILABLE'), coded('ECONNREFUSED'), coded('ENOSPC')]) {
      expect(isStoreUnavailable(error)).toBe(true);
    }
    for (const error of [coded('SQLITE_BUSY'), coded('57P01'), new Error('Connection is closed.'), 'boom', null]) expect(isStoreUnavailable(error)).toBe(false);
  });
});

describe('the failure boundary', () => {
  it('names what a method throws and what its promise rejects with, and passes results through', async () => {
    class Driver {
      value = 1;
      read(): number {
        if (this.value === 0) throw coded('SQLITE_BUSY');
        return this.value;
      }
      async write(): Promise<number> {
        if (this.value === 0) throw coded('SQLITE_FULL');
        return this.value;
      }
    }
    translateFailures(Driver, sqliteFailure);
    const driver = new Driver();
    expect(driver.read()).toBe(1);
    await expect(driver.write()).resolves.toBe(1);
    driver.value = 0;
    expect(() => driver.read()).toThrow(StoreUnavailableError);
    await expect(driver.write()).rejects.toBeInstanceOf(StoreFullError);
  });

  it('wraps only the methods named, and refuses a name that is no method', async () => {
    class Driver {
      async named(): Promise<number> {
        throw coded('SQLITE_BUSY');
      }
      async other(): Promise<number> {
        throw coded('SQLITE_BUSY');
      }
    }
    translateFailures(Driver, sqliteFailure, ['named']);
    await expect(new Driver().named()).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(new Driver().other()).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    class Fields {
      value = 1;
    }
    expect(() => translateFailures(Fields, sqliteFailure, ['value'])).toThrow('Expected `value` to be a method of Fields.');
  });

  it('is in place on a real store: a closed SQLite store rejects with the port error', async () => {
    const store = new SqliteStore(':memory:');
    await store.init();
    await store.close();
    await expect(store.getTask('default', 'x')).rejects.toMatchObject({ name: 'StoreUnavailableError', code: 'STORE_UNAVAILABLE' });
    await expect(store.access.getApiKey('k')).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
