import { OwnDatabase, OwnRedis } from './own-servers.js';
import type { ChaosContext } from './scenario.js';

/** A store a scenario can run on: a fresh one per run, removed at its end. */
export interface StoreFixture {
  /** `sqlite`, `postgres`, `redis`: the suffix of a scenario's id on this store. */
  id: string;
  /** As the results table names it. */
  name: string;
  /** Makes a fresh store and returns its `--store` URL; its removal is deferred on `ctx`. */
  fresh(ctx: ChaosContext): Promise<string>;
}

/** One file in a temporary directory. */
export const SQLITE: StoreFixture = {
  id: 'sqlite',
  name: 'SQLite',
  fresh: async (ctx) => `sqlite:${await ctx.tempDir()}/retryd.db`,
};

/** A database made for this run on the shared PostgreSQL server, dropped at its end. */
export async function ownDatabase(ctx: ChaosContext): Promise<OwnDatabase> {
  const db = new OwnDatabase();
  await db.create();
  ctx.defer(() => db.drop());
  return db;
}

/** A redis-server of its own (AOF, `appendfsync always`), stopped at the end of the run. */
export async function ownRedis(ctx: ChaosContext): Promise<OwnRedis> {
  const server = new OwnRedis(await ctx.tempDir());
  await server.start();
  ctx.defer(() => server.stop());
  return server;
}

/** A database of its own on the shared PostgreSQL server. */
export const POSTGRES: StoreFixture = { id: 'postgres', name: 'PostgreSQL', fresh: async (ctx) => (await ownDatabase(ctx)).url };

/** A redis-server of its own. */
export const REDIS: StoreFixture = { id: 'redis', name: 'Redis', fresh: async (ctx) => (await ownRedis(ctx)).url };

/**
 * The stores the scenarios that concern every store run on: SQLite by default (inside `npm test`), those named in
 * `RETRYD_CHAOS_STORES` (`sqlite,postgres,redis`, as `npm run chaos` sets it) otherwise.
 */
export function chaosStores(): StoreFixture[] {
  const wanted = (process.env['RETRYD_CHAOS_STORES'] ?? 'sqlite').split(',');
  return [SQLITE, POSTGRES, REDIS].filter((store) => wanted.includes(store.id));
}
