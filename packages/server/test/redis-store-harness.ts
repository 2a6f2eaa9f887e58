import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { expect } from 'vitest';
import { TERMINAL_STATUSES } from '@retryd/core';
import type { Redis } from 'ioredis';
import type { PartitionKeys } from '../src/backends/redis/keys.js';
import type { RedisStore } from '../src/backends/redis/redis-store.js';
import { STATE_FIELDS } from '../src/backends/redis/task-codec.js';
import { REDIS_URL, adminClient, freshStore } from './redis-harness.js';

// What the Redis store's test files share: stores and admin clients that are closed after each test, and the check
// that a partition's indexes agree with its tasks. Each file registers the clean-ups itself:
//
//   afterAll(dropPrefixes);
//   afterEach(closeOpened);

const open: RedisStore[] = [];
const admins: Redis[] = [];
const sockets: Socket[] = [];

/** Initialises `store` (default: a fresh one on its own prefix) and closes it after the test. */
export async function opened(store = freshStore()): Promise<RedisStore> {
  open.push(store);
  await store.init();
  return store;
}

/**
 * A task's record (layout 6: its field in the partition's `tasks` hash, a MessagePack array) by field name, null
 * where absent; undefined when there is no such task. Unpacked by Redis's own MessagePack library, as the scripts do.
 */
export async function readRecord(client: Redis, k: PartitionKeys, taskId: string): Promise<Record<string, string | null> | undefined> {
  const values = (await client.eval("local packed = redis.call('HGET', KEYS[1], ARGV[1]) if not packed then return false end return cmsgpack.unpack(packed)", 1, k.records, taskId)) as
    | (string | null)[]
    | null;
  if (values === null) return undefined;
  expect(values.length).toBeLessThanOrEqual(STATE_FIELDS.length);
  return Object.fromEntries(STATE_FIELDS.map((field, i) => [field, values[i] ?? null]));
}

/** A plain client for looking at keys from outside the store, disconnected after the test. */
export function admin(): Redis {
  const client = adminClient();
  admins.push(client);
  return client;
}

/** Closes the stores and disconnects the clients of the test that just ended (an `afterEach` hook). */
export async function closeOpened(): Promise<void> {
  await Promise.all(open.splice(0).map((store) => store.close()));
  for (const client of admins.splice(0)) client.disconnect();
  for (const socket of sockets.splice(0)) socket.destroy();
}

/**
 * Watches every command the server runs (MONITOR) on a plain socket, calling `onCommand` with each one's source
 * (`host:port`, or `lua` inside a script) and its arguments as MONITOR prints them; resolves once monitoring, and
 * stops after the test. Not ioredis's `monitor()`: it switches to monitoring a microtask after the reply to MONITOR,
 * so monitor lines that arrive in the same packet (other test files keeping the server busy) fail it with
 * "Command queue state error".
 */
export async function monitorCommands(onCommand: (source: string, args: string[]) => void): Promise<void> {
  const url = new URL(REDIS_URL);
  const socket = connect(Number(url.port || 6379), url.hostname);
  sockets.push(socket);
  socket.setEncoding('utf8');
  const auth = url.password === '' ? '' : `AUTH ${url.username === '' ? '' : `${decodeURIComponent(url.username)} `}${decodeURIComponent(url.password)}\r\n`;
  // The replies to AUTH (when sent) and to MONITOR.
  let awaited = auth === '' ? 1 : 2;
  let buffered = '';
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf('\r\n'); end >= 0; end = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (line === '+OK' && --awaited === 0) resolve();
        else if (line.startsWith('-')) reject(new Error(`MONITOR refused: ${line}`));
        const command = /^\+\S+ \[\d+ (\S+)\] "(.*)"$/.exec(line);
        if (command !== null) onCommand(command[1] as string, (command[2] as string).split('" "').map((arg) => arg.replace(/\\"/g, '"')));
      }
    });
    socket.write(`${auth}MONITOR\r\n`);
  });
}

/**
 * Checks a partition's indexes against its tasks: each target's queue holds exactly its PENDING tasks by due time,
 * each target's gate counts exactly its IN_FLIGHT tasks, and `ready` scores exactly the targets with a PENDING task
 * that are below their in-flight limit, at max(earliest due, hold, the rate limit's next whole token).
 */
export async function expectIndexesExact(client: Redis, k: PartitionKeys): Promise<void> {
  const targets = await client.zrange(k.targets, 0, -1);
  const ready = await client.zrange(k.ready, 0, -1, 'WITHSCORES');
  const readyScores = new Map<string, number>();
  for (let i = 0; i + 1 < ready.length; i += 2) readyScores.set(ready[i] as string, Number(ready[i + 1]));
  // `live` lists exactly the PENDING and IN_FLIGHT tasks; layout 6's sets of each are gone.
  expect(await client.exists(k.status('PENDING'), k.status('IN_FLIGHT'))).toBe(0);
  const live = new Map<string, string>();
  for (const member of await client.zrange(k.live, 0, -1)) live.set(member.slice(16), (await readRecord(client, k, member.slice(16)))?.status as string);
  const pending = new Set([...live].filter(([, status]) => status === 'PENDING').map(([id]) => id));
  const inFlight = new Map<string, number>();
  const leased = await client.zrange(k.leases, 0, -1);
  for (const id of leased) {
    const target = (await readRecord(client, k, id))?.target as string;
    inFlight.set(target, (inFlight.get(target) ?? 0) + 1);
    expect(live.get(id), `${id} leased`).toBe('IN_FLIGHT');
  }
  expect(pending.size + leased.length, 'live tasks').toBe(live.size);
  let queued = 0;
  for (const target of targets) {
    const queue = await client.zrange(k.queue(target), 0, -1, 'WITHSCORES');
    for (let i = 0; i < queue.length; i += 2) {
      const { status, due, target: owner } = (await readRecord(client, k, queue[i] as string)) ?? {};
      expect([status, Number(due), owner]).toEqual(['PENDING', Number(queue[i + 1]), target]);
      expect(pending.has(queue[i] as string)).toBe(true);
      queued++;
    }
    const gate = await client.hgetall(k.gate(target));
    expect(Number(gate.inFlight ?? 0), `${target} in flight`).toBe(inFlight.get(target) ?? 0);
    const atLimit = gate.maxInFlight !== undefined && Number(gate.inFlight ?? 0) >= Number(gate.maxInFlight);
    const hold = gate.held === undefined ? -Infinity : Number(gate.held);
    const token = gate.rate === undefined ? -Infinity : nextTokenAt(Number(gate.tokens), Number(gate.tokensAt), Number(gate.rate));
    const expected = queue.length === 0 || atLimit ? undefined : Math.max(Number(queue[1]), hold, token);
    expect(readyScores.get(target), target).toBe(expected);
  }
  expect(queued).toBe(pending.size);
  expect([...readyScores.keys()].every((target) => targets.includes(target))).toBe(true);
  await expectExpiringExact(client, k);
}

/**
 * Checks a partition's retention index: `expiring` holds exactly its finished tasks whose record has `expires`, each
 * scored by it (a live task, and a finished one without `expires`, is never in it).
 */
export async function expectExpiringExact(client: Redis, k: PartitionKeys): Promise<void> {
  const indexed = await client.zrange(k.expiring, 0, -1, 'WITHSCORES');
  const scores = new Map<string, number>();
  for (let i = 0; i + 1 < indexed.length; i += 2) scores.set(indexed[i] as string, Number(indexed[i + 1]));
  const expected = new Map<string, number>();
  for (const status of TERMINAL_STATUSES) {
    for (const member of await client.zrange(k.status(status), 0, -1)) {
      const record = await readRecord(client, k, member.slice(16));
      if (record?.expires !== null && record?.expires !== undefined) expected.set(member.slice(16), Number(record.expires));
    }
  }
  expect(scores).toEqual(expected);
}

/**
 * The least time at which a bucket holding `tokens` at `at`, filling at `rate` per second, holds a whole token
 * (-Infinity when it already does), computed apart from the scripts: the same double arithmetic, stepped one
 * representable time at a time.
 */
export function nextTokenAt(tokens: number, at: number, rate: number): number {
  if (tokens >= 1) return -Infinity;
  const line = (t: number) => tokens + ((t - at) * rate) / 1000;
  let t = at + ((1 - tokens) * 1000) / rate;
  while (line(t) < 1) t = adjacent(t, 1);
  while (line(adjacent(t, -1)) >= 1) t = adjacent(t, -1);
  return t;
}

/** The double next to a positive `t`, above (1) or below (-1). */
function adjacent(t: number, direction: 1 | -1): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, t);
  view.setBigUint64(0, view.getBigUint64(0) + BigInt(direction));
  return view.getFloat64(0);
}
