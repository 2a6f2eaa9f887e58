#!/usr/bin/env node
// What one `AdminReads.oldestPending(100)` costs (the read behind retry_oldest_pending_age_seconds, made at most once
// per 5 s per scraped instance), with `countByStatus()` (retry_tasks' read) beside it for scale, on each store.
//
//   node packages/server/scripts/oldest-pending-cost.mjs [--store sqlite,postgres,redis] [--pending 100000]
//        [--targets 1000] [--reads 30] [--postgres URL] [--redis URL] [--cluster redis+cluster://host:port,...]
//
// For each store, a fresh one (a temporary SQLite file, a PostgreSQL schema `retryd_cost_*`, a Redis key prefix
// `retryd-cost-*`; `--cluster` adds Redis Cluster), removed afterwards, in two shapes:
//   interleaved: --pending PENDING tasks over --targets targets, created one after another round robin;
//   backlog:     the same after one target's --pending / 2 tasks, all older than the others' (the walk's worst case:
//                its bound, OLDEST_PENDING_WALK entries, is reached).
// Figures: ms per read (p50, mean, max of --reads after 3 warm-up reads) and what the read answered. Tasks are
// written through the store port (insertTasks, batches of 1,000), made as the benchmarks make them
// (bench/service/lib/new-task.mjs: every field of the build's field table).
// Uses the build: run `npm run build` first.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis, Cluster } from 'ioredis';
import pg from 'pg';
import { newTaskMaker } from '../../../bench/service/lib/new-task.mjs';

const DIST = new URL('../dist/', import.meta.url);
const { openStore } = await import(new URL('service/open-store.js', DIST).href);
const { TASK_FIELDS } = await import(new URL('domain/task-fields.js', DIST).href);
const { targetKeyOf } = await import(new URL('domain/target-key.js', DIST).href);

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite,postgres,redis' },
    pending: { type: 'string', default: '100000' },
    targets: { type: 'string', default: '1000' },
    reads: { type: 'string', default: '30' },
    postgres: { type: 'string', default: 'postgres://root@127.0.0.1:5432/test' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    cluster: { type: 'string' },
  },
});
const positive = (name) => {
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`Expected \`--${name}\` to be an integer >= 1, got ${args[name]}.`);
  return n;
};
const PENDING = positive('pending');
const TARGETS = positive('targets');
const READS = positive('reads');
const LIMIT = 100;
const T0 = Date.now() - 86_400_000;

const makeTask = newTaskMaker({ TASK_FIELDS, targetKeyOf, tenantId: 'default' });
const task = (targetUrl, createdAt) => makeTask({ targetUrl, dueAt: createdAt });

const origin = (i) => `https://t${String(i).padStart(4, '0')}.example.com/hook`;

async function fill(store, backlog) {
  let at = T0;
  const all = [];
  if (backlog) for (let i = 0; i < PENDING / 2; i++) all.push(task('https://stuck.example.com/hook', at++));
  for (let i = 0; i < PENDING; i++) all.push(task(origin(i % TARGETS), at++));
  for (let i = 0; i < all.length; i += 1_000) await store.insertTasks(all.slice(i, i + 1_000));
  return all.length;
}

async function timed(fn) {
  for (let i = 0; i < 3; i++) await fn();
  const ms = [];
  let answer;
  for (let i = 0; i < READS; i++) {
    const start = performance.now();
    answer = await fn();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  return { p50: ms[Math.floor(ms.length / 2)], mean, max: ms.at(-1), answer };
}

/** A fresh store of `kind` and how to remove it. */
async function place(kind) {
  const name = `retryd_cost_${randomBytes(4).toString('hex')}`;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'retryd-cost-'));
    return { url: `sqlite:${join(dir, 'retryd.db')}`, remove: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (kind === 'postgres') {
    const url = new URL(args.postgres);
    url.searchParams.set('schema', name);
    return {
      url: url.href,
      remove: async () => {
        const client = new pg.Client({ connectionString: args.postgres });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
        await client.end();
      },
    };
  }
  const prefix = name.replaceAll('_', '-');
  const base = kind === 'redis' ? args.redis : args.cluster;
  // Not a WHATWG URL on Redis Cluster: its host part lists the nodes, comma-separated.
  const hosts = base.replace(/^[a-z+]+:\/\//, '').split(/[/?]/)[0].split(',');
  return {
    url: `${base}${base.includes('?') ? '&' : '?'}prefix=${prefix}`,
    remove: async () => {
      const client = kind === 'redis' ? new Redis(base) : new Cluster(hosts.map((h) => ({ host: h.split(':')[0], port: Number(h.split(':')[1]) })));
      // A cluster client knows its masters once it is ready.
      if (kind !== 'redis') await new Promise((resolve) => client.once('ready', resolve));
      const nodes = kind === 'redis' ? [client] : client.nodes('master');
      for (const node of nodes) {
        for (const pattern of [`{${prefix}:*`, `{${prefix}}:*`]) {
          let cursor = '0';
          do {
            const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
            for (const key of keys) await client.del(key);
            cursor = next;
          } while (cursor !== '0');
        }
      }
      client.disconnect();
    },
  };
}

const kinds = args.store.split(',').map((s) => s.trim()).filter((s) => s !== '');
if (args.cluster !== undefined) kinds.push('redis cluster');
console.log(`oldestPending(${LIMIT}) and countByStatus(), ${READS} reads each; ${PENDING} PENDING tasks over ${TARGETS} targets`);
console.log('store          shape        tasks    oldestPending p50 / mean / max ms   answered  oldest target         countByStatus p50 ms');
for (const kind of kinds) {
  for (const backlog of [false, true]) {
    const where = await place(kind === 'redis cluster' ? 'cluster' : kind);
    const { store, blobs } = await openStore(where.url);
    try {
      const tasks = await fill(store, backlog);
      const oldest = await timed(() => store.admin.oldestPending(LIMIT));
      const counts = await timed(() => store.admin.countByStatus());
      const first = oldest.answer[0]?.targetKey.replace('https://', '') ?? '-';
      const f = (n) => n.toFixed(2).padStart(7);
      console.log(
        `${kind.padEnd(14)} ${(backlog ? 'backlog' : 'interleaved').padEnd(12)} ${String(tasks).padEnd(8)} ` +
          `${f(oldest.p50)} / ${f(oldest.mean)} / ${f(oldest.max)}          ${String(oldest.answer.length).padEnd(9)} ${first.padEnd(21)} ${f(counts.p50)}`,
      );
    } finally {
      await store.close();
      await blobs.close?.();
      await where.remove();
    }
  }
}
