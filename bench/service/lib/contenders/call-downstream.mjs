// The HTTP call the peers' processors make: undici `request`, as retryd's engine uses undici.

import { request } from 'undici';

/**
 * POSTs `body` with the task's idempotency key (and the attempt number when the peer exposes it); resolves on
 * 2xx, throws otherwise (so the peer retries).
 */
export async function callDownstream(url, key, body, attempt) {
  const res = await request(url, {
    method: 'POST',
    headers:
      attempt === undefined
        ? { 'content-type': 'application/json', 'idempotency-key': key }
        : { 'content-type': 'application/json', 'idempotency-key': key, 'retryd-attempt': String(attempt) },
    body,
  });
  // retryd reads the first 4 KiB of every answer; these answers are a few bytes, so reading them all is the same work.
  await res.body.text();
  if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}`);
}

/** CPU ms of every process whose command name is `comm` (e.g. `redis-server`, `postgres`), from /proc. */
export async function cpuMsOfCommand(comm) {
  const { readdir, readFile } = await import('node:fs/promises');
  let total = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const text = await readFile(`/proc/${pid}/stat`, 'utf8');
      const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
      if (name !== comm) continue;
      const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
      total += ((Number(rest[11]) + Number(rest[12])) * 1000) / 100;
    } catch {
      // the process ended while we looked
    }
  }
  return total;
}

/** The process name of each networked store's server, whose CPU a run counts apart; none for SQLite (in-process). */
const STORE_SERVER = { postgres: 'postgres', redis: 'redis-server' };

/** CPU ms used so far by the server of a store of `storeKind` (every such process), or undefined for SQLite. */
export async function storeServerCpuMs(storeKind) {
  const server = STORE_SERVER[storeKind];
  return server === undefined ? undefined : cpuMsOfCommand(server);
}

/** CPU ms used so far by this (the bench) process. */
export function ownCpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
