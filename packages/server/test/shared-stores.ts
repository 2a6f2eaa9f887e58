import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POSTGRES_URL, dropSchemas, freshSchema } from './postgres-harness.js';
import { REDIS_URL, dropPrefixes, freshPrefix } from './redis-harness.js';

// The stores several `retryd serve` processes of one test share (many-instances, protection-crash): each run on a
// schema, key prefix or file of its own, on the shared servers.

/** A store `retryd serve` instances share: a fresh `--store` URL for each run, and the clean-up of all of them. */
export interface SharedStore {
  name: string;
  /** A `--store` URL on a schema, key prefix or file of its own. */
  freshUrl: () => string;
  /** Drops every schema, prefix or file made by `freshUrl`. */
  drop: () => Promise<void>;
}

/** A store on a shared server: each run on the `param` (a schema, a key prefix) `fresh` names, dropped by `drop`. */
function onSharedServer(name: string, serverUrl: string, param: string, fresh: () => string, drop: () => Promise<void>): SharedStore {
  return {
    name,
    freshUrl: () => {
      const url = new URL(serverUrl);
      url.searchParams.set(param, fresh());
      return url.toString();
    },
    drop,
  };
}

/** A schema of its own on the shared PostgreSQL server. */
export const POSTGRES_STORE = onSharedServer('PostgreSQL', POSTGRES_URL, 'schema', freshSchema, dropSchemas);

/** A key prefix of its own on the shared Redis server. */
export const REDIS_STORE = onSharedServer('Redis', REDIS_URL, 'prefix', freshPrefix, dropPrefixes);

const sqliteDirs = new Set<string>();

/** One file in a temporary directory, which every process opens (SQLite's locks share it). */
export const SQLITE_STORE: SharedStore = {
  name: 'SQLite',
  freshUrl: () => {
    const dir = mkdtempSync(join(tmpdir(), 'retryd-shared-'));
    sqliteDirs.add(dir);
    return `sqlite:${join(dir, 'retryd.db')}`;
  },
  drop: async () => {
    for (const dir of sqliteDirs) rmSync(dir, { recursive: true, force: true });
    sqliteDirs.clear();
  },
};
