// Redis as deployed, in W1's results: the rows w1.mjs ran on a Redis of its own with AOF (`--redis-aof`), beside
// the rows on the machine's Redis, which runs without persistence. Pure: read from a results file's W1 rows.

/** Whether a W1 row ran on W1's own AOF server (`retryd-redis-aof…`, `bullmq-aof`, `bare-store-redis-aof`). */
export const onAofServer = (row) => row.id.split('-').includes('aof');

/**
 * The id of the peer a retryd W1 row is read against: the store's peer (`peerOfStore`), on the same Redis server
 * (`bullmq-aof` for a row on the AOF server).
 */
export const peerIdOf = (row, peerOfStore) => (onAofServer(row) ? `${peerOfStore}-aof` : peerOfStore);

/**
 * A Redis row's persistence in a few words, from its durability as read back from its server (servers.mjs'
 * `redisDurability`): `AOF everysec`, `AOF always`, `no persistence`; undefined when the label says neither.
 */
export function persistenceOf(durability = '') {
  const aof = /^AOF on, appendfsync (\w+)/.exec(durability);
  if (aof !== null) return `AOF ${aof[1]}`;
  return /^NO durability: appendonly no, save ""/.test(durability) ? 'no persistence' : undefined;
}

/**
 * Where a retryd row ran, as the page names it: the store, and for Redis in a run that had it both ways (on the AOF
 * server and on the machine's Redis) the persistence of each (`Redis, AOF everysec`, `Redis, no persistence`). A run
 * with Redis one way only keeps the store's name, as pages from before `--redis-aof` did.
 */
export function placeOf(row, storeName, rows) {
  const bothWays = rows.some(onAofServer) && rows.some((r) => !onAofServer(r) && /^retryd-redis/.test(r.id));
  const persistence = persistenceOf(row.durability);
  return bothWays && /^retryd-redis/.test(row.id) && persistence !== undefined ? `${storeName}, ${persistence}` : storeName;
}
