import { readFileSync } from 'node:fs';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection.js';

/** The scripts beside this module (copied into `dist` by `scripts/copy-assets.mjs`). */
const LUA_DIR = new URL('./lua/', import.meta.url);
const INCLUDE = /^--- @include "([a-z0-9-]+)"$/gm;

/** Every script of the store, with how many of its arguments are keys. */
export const SCRIPTS = {
  insertTasks: { file: 'insert-tasks.lua', keys: 5 },
  claimDue: { file: 'claim-due.lua', keys: 4 },
  readReady: { file: 'read-ready.lua', keys: 1 },
  completeAttempts: { file: 'complete-attempts.lua', keys: 3 },
  getTasks: { file: 'get-tasks.lua', keys: 1 },
  readLeases: { file: 'read-leases.lua', keys: 1 },
  extendLease: { file: 'extend-lease.lua', keys: 1 },
  releaseLeases: { file: 'release-leases.lua', keys: 3 },
  cancelTask: { file: 'cancel-task.lua', keys: 3 },
  requestCancel: { file: 'request-cancel.lua', keys: 1 },
  replayTask: { file: 'replay-task.lua', keys: 3 },
  rescheduleTask: { file: 'reschedule-task.lua', keys: 3 },
  purgeExpired: { file: 'purge-expired.lua', keys: 3 },
  deleteFinished: { file: 'delete-finished.lua', keys: 3 },
  settleCallbacks: { file: 'settle-callbacks.lua', keys: 1 },
  resealTask: { file: 'reseal-task.lua', keys: 1 },
  holdTarget: { file: 'hold-target.lua', keys: 2 },
  releaseTarget: { file: 'release-target.lua', keys: 1 },
  limitTarget: { file: 'limit-target.lua', keys: 2 },
  readTargets: { file: 'read-targets.lua', keys: 1 },
  readOldestPending: { file: 'read-oldest-pending.lua', keys: 2 },
  putPolicy: { file: 'put-policy.lua', keys: 2 },
  putTargetState: { file: 'put-target-state.lua', keys: 1 },
  createApiKey: { file: 'create-api-key.lua', keys: 4 },
  revokeApiKey: { file: 'revoke-api-key.lua', keys: 2 },
  migrateTasks: { file: 'migrate-tasks.lua', keys: 4 },
  migrateGates: { file: 'migrate-gates.lua', keys: 2 },
  migrateRecords: { file: 'migrate-records.lua', keys: 2 },
  migrationLock: { file: 'migration-lock.lua', keys: 1 },
} as const;

export type ScriptName = keyof typeof SCRIPTS;

/** A script's source, includes spliced in. */
export interface LoadedScript {
  name: ScriptName;
  lua: string;
  numberOfKeys: number;
}

let loaded: readonly LoadedScript[] | undefined;

/**
 * Reads every script once per process and splices in its `--- @include "name"` lines (from `lua/includes/`; an
 * include may include another), as BullMQ's command loader does: RedisClient runs one self-contained source per script.
 */
export function loadScripts(): readonly LoadedScript[] {
  loaded ??= (Object.entries(SCRIPTS) as [ScriptName, (typeof SCRIPTS)[ScriptName]][]).map(([name, { file, keys }]) => ({
    name,
    numberOfKeys: keys,
    lua: spliceIncludes(readFileSync(new URL(file, LUA_DIR), 'utf8'), []),
  }));
  return loaded;
}

function spliceIncludes(source: string, within: readonly string[]): string {
  return source.replace(INCLUDE, (_, include: string) => {
    if (within.includes(include)) throw new Error(`Lua include "${include}" includes itself (${[...within, include].join(' -> ')}).`);
    return spliceIncludes(readFileSync(new URL(`includes/${include}.lua`, LUA_DIR), 'utf8'), [...within, include]);
  });
}

/** The ioredis command a script is defined as (a prefix keeps it clear of Redis's own command names). */
function commandOf(name: ScriptName): string {
  return `retryd_${name}`;
}

/**
 * Defines every script as a command of `client` (ioredis `defineCommand`): each call sends EVALSHA, the
 * script's source goes over a connection once (the first call on it), and a server that lost its script cache
 * (a restart) gets the source again automatically on NOSCRIPT.
 */
export function defineScripts(client: RedisClient): void {
  for (const { name, lua, numberOfKeys } of loadScripts()) client.defineCommand(commandOf(name), { lua, numberOfKeys });
}

type ScriptArg = string | number;
type ScriptCall<R> = (keys: readonly string[], args: readonly ScriptArg[]) => R;

/** Runs a defined script on `client`: `keys` first, then `args`. */
export function runScript(client: RedisClient, name: ScriptName, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
  const call = (client as unknown as Record<string, ScriptCall<Promise<unknown>>>)[commandOf(name)];
  if (call === undefined) throw new Error(`Script ${name} is not defined on this connection.`);
  // ioredis flattens one level of arrays into the command's arguments: no spread of a long argument list here.
  return call.call(client, keys, args);
}

/** Queues a defined script on a pipeline or MULTI; its reply comes from `exec()`. */
export function queueScript(
  pipeline: ChainableCommander,
  name: ScriptName,
  keys: readonly string[],
  args: readonly ScriptArg[],
): void {
  const call = (pipeline as unknown as Record<string, ScriptCall<unknown>>)[commandOf(name)];
  if (call === undefined) throw new Error(`Script ${name} is not defined on this connection.`);
  call.call(pipeline, keys, args);
}
