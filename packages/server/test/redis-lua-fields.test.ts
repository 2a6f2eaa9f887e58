import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIVE_STATUSES } from '@retryd/core';
import { API_KEY_FIELDS } from '../src/backends/redis/access-store.js';
import { GATE_FIELDS } from '../src/backends/redis/target-gate.js';
import {
  DATA_ARRAY_FIELDS,
  DATA_FIELDS,
  OUTCOME_FIELDS,
  STATE_FIELDS,
  dataWithSealedParts,
  decodeAttempt,
  decodeTask,
  encodeAttempt,
  encodeTaskData,
  encodeTaskState,
  sealedPartsOfData,
} from '../src/backends/redis/task-codec.js';
import { sortKeyOf } from '../src/backends/redis/keys.js';
import type { RetryTask } from '../src/domain/task.js';
import { T0, makeAttempt, makeTask } from './fixtures/tasks.js';

/** A task's state as a script returns it (`read_state`, `task_reply`): as inserted, the listing key made whole. */
function scriptReply(task: RetryTask): string {
  const state = (JSON.parse(encodeTaskState(task)) as (string | false)[]).slice(0, STATE_FIELDS.length);
  state[STATE_FIELDS.indexOf('sortKey')] = sortKeyOf(task.createdAt, task.taskId);
  return JSON.stringify(state);
}

describe('Redis store: one definition of a task, and the Lua scripts that spell it out', () => {
  it('keeps the state hash and the data JSON apart exactly as the field definitions say', () => {
    // Every field of the data JSON holding something (a body and a bodyRef together only to see both placed).
    const task = makeTask({
      policyId: null,
      policy: { maxAttempts: 2 } as never,
      body: 'a\u0000b',
      bodyRef: 'default/b1',
      traceContext: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      sensitiveBody: true,
      runStartedAt: T0 + 0.375,
      attemptTimeoutMs: 90_000,
      connectTimeoutMs: 1_500,
    });
    const json = encodeTaskData(task);
    const values = JSON.parse(encodeTaskState(task)) as (string | false)[];
    const state = values.slice(0, STATE_FIELDS.length);
    expect(values.slice(STATE_FIELDS.length)).toEqual([task.taskId, task.idempotencyKey]);
    // The hash keeps the listing key's time digits only (the id is in its name); scripts return the whole key.
    expect(state[STATE_FIELDS.indexOf('sortKey')]).toBe(sortKeyOf(task.createdAt, ''));
    state[STATE_FIELDS.indexOf('sortKey')] = sortKeyOf(task.createdAt, task.taskId);
    // The data JSON (layout 5): the values in row order, without the tenant, the id and createdAt (the partition's and
    // the listing key's).
    expect(DATA_ARRAY_FIELDS).toEqual([
      'idempotencyKey',
      'requestHash',
      'targetUrl',
      'method',
      'headers',
      'body',
      'bodyRef',
      'policy',
      'traceContext',
      'sensitiveBody',
      'attemptTimeoutMs',
      'connectTimeoutMs',
    ]);
    // The URL after its target key, which the state hash holds (`target`).
    const kept = DATA_ARRAY_FIELDS.map((name) => (name === 'targetUrl' ? task.targetUrl.slice(task.targetKey.length) : task[name]));
    expect(kept[DATA_ARRAY_FIELDS.indexOf('targetUrl')]).toMatch(/^\//);
    expect(JSON.parse(json)).toEqual(kept);
    expect(state).toHaveLength(STATE_FIELDS.length);
    expect(state[STATE_FIELDS.indexOf('target')]).toBe('https://api.example.com');
    expect(state[STATE_FIELDS.indexOf('policyId')]).toBe(false);
    // Numbers as the exact text String(n) writes, never as JSON numbers (cjson would read them as doubles).
    expect(state[STATE_FIELDS.indexOf('runStart')]).toBe(String(T0 + 0.375));
    // What a script returns for it (task_reply): the values as a JSON array, false where absent, as cjson writes it
    // (it escapes `/` too).
    const reply = JSON.stringify(state).replaceAll('/', '\\/');
    expect(decodeTask([reply, json], task.tenantId)).toEqual(task);
    // Written before the URL was kept after its key, the whole URL reads the same.
    const whole = JSON.stringify(DATA_ARRAY_FIELDS.map((name) => task[name]));
    expect(decodeTask([reply, whole], task.tenantId)).toEqual(task);
    // Layout 4 wrote an object with every field by name, the ids and createdAt included: it reads the same.
    const layout4 = Object.fromEntries(DATA_FIELDS.map((name) => [name, task[name]]));
    expect(decodeTask([reply, JSON.stringify(layout4)], 'ignored')).toEqual(task);
    // A task stored before sensitiveBody existed has no such property in its JSON: it reads as false.
    const { sensitiveBody: _, ...older } = layout4;
    expect(decodeTask([reply, JSON.stringify(older)], 'ignored').sensitiveBody).toBe(false);
    expect(decodeTask([reply, JSON.stringify({ ...older, sensitiveBody: true })], 'ignored').sensitiveBody).toBe(true);
    // Nor did one stored before the timeouts existed, whose array ends before them: it reads them as null.
    const beforeTimeouts = JSON.stringify((JSON.parse(json) as unknown[]).slice(0, DATA_ARRAY_FIELDS.indexOf('attemptTimeoutMs')));
    expect(decodeTask([reply, beforeTimeouts], task.tenantId)).toEqual({ ...task, attemptTimeoutMs: null, connectTimeoutMs: null });
  });

  it('leaves off the end of the data JSON the fields that hold nothing, and reads them back, as from JSON that spells them out', () => {
    const task = makeTask({ body: '', bodyRef: null, policy: null, traceContext: null, sensitiveBody: false });
    const json = encodeTaskData(task);
    const reply = scriptReply(task).replaceAll('/', '\\/');
    // An empty body is a body: only null and false are left out.
    expect(JSON.parse(json)).toEqual([task.idempotencyKey, task.requestHash, task.targetUrl.slice(task.targetKey.length), task.method, task.headers, '']);
    expect(decodeTask([reply, json], task.tenantId)).toEqual(task);
    // Written out to the end, null and false included, it reads the same.
    expect(decodeTask([reply, JSON.stringify([...(JSON.parse(json) as unknown[]), null, null, null, false, null, null])], task.tenantId)).toEqual(task);
    // A null body with nothing after it is cut too; one before a field that holds something is written null.
    const bodiless = makeTask({ body: null, bodyRef: null, policy: null, traceContext: null, sensitiveBody: false });
    expect((JSON.parse(encodeTaskData(bodiless)) as unknown[]).length).toBe(5);
    const referenced = makeTask({ body: null, bodyRef: 'default/b1', policy: null, traceContext: null, sensitiveBody: false });
    expect((JSON.parse(encodeTaskData(referenced)) as unknown[]).slice(5)).toEqual([null, 'default/b1']);
    for (const t of [bodiless, referenced]) {
      const r = scriptReply(t);
      expect(decodeTask([r, encodeTaskData(t)], t.tenantId)).toEqual(t);
    }
    // As layout 4 wrote them: an object with every field, null and false included.
    const spelt = JSON.stringify(Object.fromEntries(DATA_FIELDS.map((name) => [name, task[name]])));
    expect(decodeTask([reply, spelt], 'ignored')).toEqual(task);
  });

  it("keeps a retry's delay at the end of an attempt entry: nothing more in an entry without one, read back either way", () => {
    const task = makeTask();
    const plain = makeAttempt(task, { errorMessage: 'HTTP 503' });
    // Without a delay the entry is what it was before the delay existed: its last field holding something ends it.
    expect(JSON.parse(encodeAttempt(plain))).toEqual([1, T0, 12.5, 'retry_scheduled', 'worker-1', 503, T0 + 1_000, 'HTTP 503', 'try later']);
    expect(decodeAttempt(encodeAttempt(plain), task.tenantId, task.taskId)).toEqual(plain);
    const delayed = makeAttempt(task, { responseBodySnippet: null, delayedBy: 'retry_budget', backoffAt: T0 + 400 });
    expect(JSON.parse(encodeAttempt(delayed))).toEqual([1, T0, 12.5, 'retry_scheduled', 'worker-1', 503, T0 + 1_000, null, null, 'retry_budget', T0 + 400]);
    expect(decodeAttempt(encodeAttempt(delayed), task.tenantId, task.taskId)).toEqual(delayed);
  });

  it("replaces a data JSON's headers and body in the form it was written in", () => {
    const task = makeTask({ policy: { maxAttempts: 2 } as never, traceContext: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    const headers = { 'content-type': 'text/plain' };
    const array = encodeTaskData(task);
    expect(sealedPartsOfData(array)).toEqual({ headers: task.headers, body: task.body });
    const resealed = JSON.parse(dataWithSealedParts(array, headers, 'sealed')) as unknown[];
    const written = JSON.parse(array) as unknown[];
    expect(resealed).toEqual(written.map((value, i) => (DATA_ARRAY_FIELDS[i] === 'headers' ? headers : DATA_ARRAY_FIELDS[i] === 'body' ? 'sealed' : value)));
    const object = JSON.stringify(Object.fromEntries(DATA_FIELDS.map((name) => [name, task[name]])));
    expect(sealedPartsOfData(object)).toEqual({ headers: task.headers, body: task.body });
    const rewritten = JSON.parse(dataWithSealedParts(object, headers, null)) as Record<string, unknown>;
    expect(Object.keys(rewritten)).toEqual(DATA_FIELDS);
    expect(rewritten).toEqual({ ...(JSON.parse(object) as object), headers, body: null });
  });

  it("keeps a record's values in the order layout 6 wrote them: records are read by position", () => {
    // A field added to the record goes after `sortKey` (records written before end early, and read it as null);
    // anywhere else, every stored record would need a layout migration.
    expect(STATE_FIELDS.slice(0, 18)).toEqual([
      'target', 'policyId', 'status', 'attempt', 'runOffset', 'runStart', 'lastDelay', 'due', 'updated', 'owner',
      'leaseUntil', 'token', 'version', 'cancel', 'error', 'httpStatus', 'deadReason', 'sortKey',
    ]);
  });

  it('fails when a Lua field list, a field name in a script or an outcome order disagrees with the TypeScript definition', () => {
    const sources = luaSources();
    const include = sources.find((s) => s.file === 'includes/task-state.lua')?.source ?? '';
    expect(luaTable(include, 'TASK_FIELDS')).toEqual(STATE_FIELDS);
    // FIELD, spelt out for speed: each field's position in TASK_FIELDS.
    expect(luaTable(include, 'FIELD', true)).toEqual(STATE_FIELDS.map((field, i) => `(${field} = ${i + 1})`));
    const complete = sources.find((s) => s.file === 'complete-attempts.lua')?.source ?? '';
    expect(luaTable(complete, 'OUTCOME_FIELDS')).toEqual(OUTCOME_FIELDS);
    // listing_set puts exactly core's live statuses (LIVE_STATUSES) in `live`.
    const live = /local function listing_set\(base, status\)\n\s*if (.*) then return base \.\. 'live' end/.exec(include)?.[1] ?? '';
    expect([...live.matchAll(/status == '([A-Z_]+)'/g)].map((match) => match[1])).toEqual(LIVE_STATUSES);
    const gate = sources.find((s) => s.file === 'includes/target-gate.lua')?.source ?? '';
    expect(luaTable(gate, 'GATE_FIELDS')).toEqual(GATE_FIELDS);
    // Every field a script names on a gate hash is one of GATE_FIELDS.
    const gateFields = sources.flatMap(({ file, source }) =>
      redisCalls(source)
        .filter(([command, key]) => ["'HSET'", "'HDEL'", "'HINCRBY'"].includes(command ?? '') && isGateHash(source, key ?? ''))
        .flatMap(([command, , ...rest]) => (command === "'HSET'" ? rest.filter((_, i) => i % 2 === 0) : command === "'HINCRBY'" ? rest.slice(0, 1) : rest))
        .flatMap((arg) => /^'([^']*)'$/.exec(arg)?.[1] ?? [])
        .map((field) => `${file}: ${field}`),
    );
    expect(gateFields.length).toBeGreaterThan(8);
    expect(gateFields.filter((entry) => !(GATE_FIELDS as readonly string[]).includes(entry.split(': ')[1] ?? ''))).toEqual([]);

    // Every field a script names on a task's hash (HSET, HMGET, HDEL, ..., the tables it unpacks into them, and
    // FIELD.<name> positions) is one of the definition's, and no script indexes a state by a bare number.
    const named: string[] = [];
    for (const { file, source } of sources) {
      for (const [command, key, ...rest] of redisCalls(source)) {
        if (!isTaskHash(source, key ?? '')) continue;
        const fieldsAt = command === "'HSET'" ? rest.filter((_, i) => i % 2 === 0) : command === "'HINCRBY'" ? rest.slice(0, 1) : rest;
        if (!["'HSET'", "'HMGET'", "'HDEL'", "'HGET'", "'HINCRBY'"].includes(command ?? '')) continue;
        for (const arg of fieldsAt) {
          const literal = /^'([^']*)'$/.exec(arg)?.[1];
          if (literal !== undefined) named.push(`${file}: ${literal}`);
        }
      }
      for (const table of ['del', 'set']) {
        const items = luaTable(source, table, true) ?? [];
        named.push(...items.filter((_, i) => table === 'del' || i % 2 === 0).map((item) => `${file}: ${item}`));
      }
      for (const match of source.matchAll(/FIELD\.([A-Za-z]+)/g)) named.push(`${file}: ${match[1] ?? ''}`);
      expect(source, file).not.toMatch(/state\[\d/);
    }
    expect(named.length).toBeGreaterThan(60);
    expect(named.filter((entry) => !STATE_FIELDS.includes(entry.split(': ')[1] ?? ''))).toEqual([]);
  });

  it("fails when a script names a field of an API key's hash that the TypeScript definition lacks", () => {
    const scripts = luaSources().filter(({ file }) => file.endsWith('-api-key.lua'));
    expect(scripts.map(({ file }) => file).sort()).toEqual(['create-api-key.lua', 'revoke-api-key.lua']);
    const named = scripts.flatMap(({ file, source }) => {
      // KEYS[1] is the key's hash in every one of them (their contract headers say so).
      expect(source, file).toMatch(/KEYS\[1\] apiKey +hash/);
      return redisCalls(source)
        .filter(([command, hash]) => ["'HSET'", "'HSETNX'", "'HGET'", "'HMGET'", "'HDEL'"].includes(command ?? '') && hash === 'KEYS[1]')
        .flatMap(([command, , ...rest]) => (command === "'HSET'" || command === "'HSETNX'" ? rest.filter((_, i) => i % 2 === 0) : rest))
        .flatMap((arg) => /^'([^']*)'$/.exec(arg)?.[1] ?? [])
        .map((field) => `${file}: ${field}`);
    });
    expect(named.sort()).toEqual(['revoke-api-key.lua: revokedAt', 'revoke-api-key.lua: tenantId']);
    expect(named.filter((entry) => !(API_KEY_FIELDS as readonly string[]).includes(entry.split(': ')[1] ?? ''))).toEqual([]);
  });
});

const LUA_DIR = new URL('../src/backends/redis/lua/', import.meta.url);

/** Every Lua file of the store (includes as `includes/<name>.lua`) with its source. */
function luaSources(): { file: string; source: string }[] {
  const files = [...readdirSync(LUA_DIR), ...readdirSync(new URL('includes/', LUA_DIR)).map((f) => `includes/${f}`)];
  return files.filter((file) => file.endsWith('.lua')).map((file) => ({ file, source: readFileSync(new URL(file, LUA_DIR), 'utf8') }));
}

/** The items of a table literal `local <name> = { ... }` (quoted strings only, unless `raw`: every item, as written). */
function luaTable(source: string, name: string, raw = false): string[] | undefined {
  const body = new RegExp(`local ${name} = \\{([^}]*)\\}`).exec(source)?.[1];
  if (body === undefined) return undefined;
  const items = body.split(',').map((item) => item.trim());
  return raw ? items.map((item) => /^'([^']*)'$/.exec(item)?.[1] ?? `(${item})`) : items.flatMap((item) => /^'([^']*)'$/.exec(item)?.[1] ?? []);
}

/** The arguments of every `redis.call(...)` in a source, as written, split at top-level commas. */
function redisCalls(source: string): string[][] {
  const calls: string[][] = [];
  for (const match of source.matchAll(/redis\.call\(/g)) {
    const args: string[] = [];
    let [depth, arg, quoted] = [1, '', false];
    for (let i = (match.index ?? 0) + match[0].length; i < source.length; i++) {
      const c = source[i] as string;
      if (quoted || c === "'") {
        if (c === "'") quoted = !quoted;
        arg += c;
        continue;
      }
      if (c === '(' || c === '{') depth++;
      if (c === ')' || c === '}') depth--;
      if (depth === 0) break;
      if (c === ',' && depth === 1) {
        args.push(arg.trim());
        arg = '';
      } else arg += c;
    }
    calls.push([...args, arg.trim()]);
  }
  return calls;
}

/** Whether a key expression of a script names a target's gate hash (`gate_key(base, target)`). */
function isGateHash(source: string, key: string): boolean {
  if (key.startsWith('gate_key(')) return true;
  return /^[a-z_]+$/.test(key) && new RegExp(`local ${key} = gate_key\\(`).test(source);
}

/** Whether a key expression of a script names a task's state hash (`task:<id>`). */
function isTaskHash(source: string, key: string): boolean {
  if (key.includes("'task:'")) return true;
  const keysIndex = /^KEYS\[(\d+)\]$/.exec(key)?.[1];
  if (keysIndex !== undefined) return new RegExp(`KEYS\\[${keysIndex}\\] task `).test(source);
  return /^[a-z_]+$/.test(key) && new RegExp(`local ${key} = [^\\n]*'task:'`).test(source);
}
