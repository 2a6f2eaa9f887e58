// A build's own store backend, opened through its dist/ as `retryd serve` opens it, for the benchmarks that call a
// store's port directly (claim-cost.mjs, cycle-cost.mjs). SQLite from any build; PostgreSQL and Redis from builds
// that have backends/ (issue 8 on).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Where a build keeps its SQLite store: backends/ from issue 8 on, stores/ before. */
const SQLITE_STORE_PATHS = ['backends/sqlite/sqlite-store.js', 'stores/sqlite/sqlite-store.js'];

/**
 * Opens (and migrates) the store at `place` (from `retrydStore`) with the build in `dist`, loading only that
 * backend's modules. SQLite runs with `synchronous` FULL, or NORMAL for `sync: 'normal'`, as `retryd serve --sync`.
 *
 * @example
 * const store = await openBuiltStore(CURRENT_DIST, await retrydStore('sqlite', { name: 'x' }));
 */
export async function openBuiltStore(dist, place, { sync = 'full' } = {}) {
  const load = (path) => {
    if (!existsSync(join(dist, path))) throw new Error(`${dist}: no ${path} (build it: npm run build; PostgreSQL and Redis from issue 8 on)`);
    return import(pathToFileURL(join(dist, path)).href);
  };
  if (place.kind === 'postgres') return (await (await load('backends/postgres/open-postgres-store.js')).openPostgresStore(place.url, {})).store;
  if (place.kind === 'redis') return (await (await load('backends/redis/open-redis-store.js')).openRedisStore(place.url, {})).store;
  const path = SQLITE_STORE_PATHS.find((p) => existsSync(join(dist, p)));
  if (path === undefined) throw new Error(`${dist}: no SQLite store (build it: npm run build)`);
  const { SqliteStore } = await load(path);
  const store = new SqliteStore(place.url.slice('sqlite:'.length), { synchronous: sync === 'normal' ? 'NORMAL' : 'FULL' });
  await store.init();
  return store;
}
