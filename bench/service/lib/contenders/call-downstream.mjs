// The HTTP call the peers' processors make: undici `request`, as retryd's engine uses undici.

import { readFile, readdir } from 'node:fs/promises';
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

/** A process's command name and CPU ms so far, from /proc/<pid>/stat; undefined once it has ended. */
async function processCpu(pid) {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { comm: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), cpuMs: ((Number(rest[11]) + Number(rest[12])) * 1000) / 100 };
  } catch {
    return undefined; // the process ended while we looked
  }
}

/**
 * CPU ms of every process whose command name is `comm` (e.g. `redis-server`, `postgres`), from /proc, but those of
 * `exceptPids` (a server of the benchmark's own, counted apart: see {@link cpuMsOfPid}).
 *
 * @param {string} comm
 * @param {{ exceptPids?: number[] | undefined }} [options]
 */
export async function cpuMsOfCommand(comm, { exceptPids = [] } = {}) {
  let total = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || exceptPids.includes(Number(pid))) continue;
    const p = await processCpu(pid);
    if (p?.comm === comm) total += p.cpuMs;
  }
  return total;
}

/** CPU ms of one process (a server the benchmark started, whose CPU is its rows' alone). */
export async function cpuMsOfPid(pid) {
  const p = await processCpu(pid);
  if (p === undefined) throw new Error(`process ${pid} has ended: its CPU cannot be read`);
  return p.cpuMs;
}

/** The process name of each networked store's server, whose CPU a run counts apart; none for SQLite (in-process). */
const STORE_SERVER = { postgres: 'postgres', redis: 'redis-server' };

/**
 * CPU ms used so far by the server of a store of `storeKind` (every such process but `exceptPids`), or undefined for
 * SQLite.
 *
 * @param {string} storeKind
 * @param {{ exceptPids?: number[] | undefined }} [options]
 * @returns {Promise<number | undefined>}
 */
export async function storeServerCpuMs(storeKind, { exceptPids = [] } = {}) {
  const server = STORE_SERVER[storeKind];
  return server === undefined ? undefined : cpuMsOfCommand(server, { exceptPids });
}

/** CPU ms used so far by this (the bench) process. */
export function ownCpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
