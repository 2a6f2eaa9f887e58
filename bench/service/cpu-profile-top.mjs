// Summarises a V8 CPU profile (`node --cpu-prof`, e.g. from `w1.mjs --cpu-prof DIR`): the functions with the most
// self time and the most total (inclusive) time, with file:line mapped back to the TypeScript sources through the
// `.js.map` files beside the built JavaScript.
//
//   npm run bench -- probe cpu-profile-top <file.cpuprofile> [--top 30] [--filter packages/server]
//                                          [--from-first attempt-runner.ts] [--until-first bounded-page.ts]
//                                          [--skip-seconds S] [--attempts N]
//
// --from-first TEXT: only the samples from the first one with a frame whose location contains TEXT (e.g.
// `attempt-runner.ts`: W1's dispatch, after its enqueue and the service's start). --attempts N: also the busy time and
// each category's self time per attempt (µs), N being the attempts made in that span. --until-first TEXT: only the
// samples before the first one (after the start and the skipped seconds) with a frame whose location contains TEXT
// (e.g. `bounded-page.ts`: the listing a benchmark reads its results with once the load has ended, which is not the
// load's work).
// --skip-seconds S: leaves out the span's first S seconds (a warm-up). The categories (the store, the
// HTTP client, the HTTP server, logging, metrics, the protections, the engine, timers, promises, GC) sum self time
// by where it was spent: a profile's shares do not depend on how loaded the machine was, unlike its wall-clock figures.

import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, filter: { type: 'string' }, 'from-first': { type: 'string' }, 'until-first': { type: 'string' }, 'skip-seconds': { type: 'string', default: '0' }, attempts: { type: 'string' } },
});
if (positionals.length !== 1) {
  throw new Error('usage: node bench/service/cpu-profile-top.mjs <file.cpuprofile> [--top N] [--filter TEXT] [--from-first TEXT] [--until-first TEXT] [--skip-seconds S] [--attempts N]');
}
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const TOP = Number(args.top);

const maps = new Map();
function sourceMapOf(url) {
  if (!maps.has(url)) {
    let map = null;
    try {
      const path = url.startsWith('file://') ? fileURLToPath(url) : url;
      if (existsSync(`${path}.map`)) map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      map = null;
    }
    maps.set(url, map);
  }
  return maps.get(url);
}

/** "function file:line", the file and line in the TypeScript source when a source map exists. */
function where(frame) {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  let file = frame.url.replace(/^file:\/\//, '');
  let line = frame.lineNumber + 1;
  const map = sourceMapOf(frame.url);
  if (map) {
    const entry = map.findEntry(frame.lineNumber, frame.columnNumber);
    if (entry?.originalSource) {
      // A source map's sources are relative to the built file (pg-protocol's `../src/parser.ts`): resolved, they say
      // whose they are.
      file = fileURLToPath(new URL(entry.originalSource, frame.url.startsWith('file://') ? frame.url : pathToFileURL(frame.url)));
      line = entry.originalLine + 1;
    }
  }
  file = file.replace(/^.*\/work\/main\//, '').replace(/^.*\/node_modules\//, 'node_modules/');
  return `${name} ${file}:${line}`;
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const selfTime = new Map();
const totalTime = new Map();
let total = 0;
/** The frames of a sample's stack, leaf first. */
function* stackOf(id) {
  for (let at = id; at !== undefined; at = parent.get(at)) yield byId.get(at);
}
const fromFirst = args['from-first'];
/** The index of the first sample from `from` on with a frame whose location contains `text`, or -1. */
const firstWith = (text, from) => {
  for (let i = from; i < profile.samples.length; i++) if ([...stackOf(profile.samples[i])].some((n) => where(n.callFrame).includes(text))) return i;
  return -1;
};
const start = fromFirst === undefined ? 0 : firstWith(fromFirst, 0);
if (start === -1) throw new Error(`--from-first: no sample has a frame in ${fromFirst}`);
const skipMs = 1000 * Number(args['skip-seconds']);
if (!(skipMs >= 0)) throw new Error(`--skip-seconds must be a number >= 0, got ${args['skip-seconds']}`);
// The first sample after the skipped seconds: --until-first looks from there, so that a frame the warm-up also ran
// (W4 lists the store once its warm-up is recorded) does not end the span before it begins.
let first = start;
for (let skipped = 0; first < profile.samples.length && skipped < skipMs; first++) skipped += (profile.timeDeltas[first] ?? 0) / 1000;
const untilFirst = args['until-first'];
const end = untilFirst === undefined ? profile.samples.length : firstWith(untilFirst, first);
if (end === -1) throw new Error(`--until-first: no sample after the start and the skipped seconds has a frame in ${untilFirst}`);
for (let i = first; i < end; i++) {
  const dt = (profile.timeDeltas[i] ?? 0) / 1000;
  total += dt;
  let id = profile.samples[i];
  const leaf = byId.get(id);
  const leafKey = where(leaf.callFrame);
  selfTime.set(leafKey, (selfTime.get(leafKey) ?? 0) + dt);
  const seen = new Set();
  while (id !== undefined) {
    const key = where(byId.get(id).callFrame);
    if (!seen.has(key)) {
      seen.add(key);
      totalTime.set(key, (totalTime.get(key) ?? 0) + dt);
    }
    id = parent.get(id);
  }
}

const idle = selfTime.get('(idle)') ?? 0;
const busy = total - idle;
console.log(`profile: ${(total / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(1)} s (${((100 * busy) / total).toFixed(0)}%), idle ${(idle / 1000).toFixed(1)} s`);
const show = (title, m) => {
  console.log(`\n${title} (ms, % of busy time)`);
  [...m]
    .filter(([k]) => !['(idle)', '(root)', '(program)'].includes(k) && (args.filter === undefined || k.includes(args.filter)))
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .forEach(([k, v]) => console.log(`${v.toFixed(0).padStart(8)}  ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`));
};
show('self time', selfTime);
show('total time', totalTime);
console.log(`\n(program) ${(selfTime.get('(program)') ?? 0).toFixed(0)} ms, (garbage collector) ${(selfTime.get('(garbage collector)') ?? 0).toFixed(0)} ms`);

/** @type {[string, RegExp][]} Where a function's self time counts, from its location (the first rule that matches). */
const CATEGORIES = [
  ['GC', /^\(garbage collector\)/],
  ['V8 and native, outside JS', /^\(program\)/],
  ['store: SQLite', /better-sqlite3|backends\/sqlite/],
  ['store: PostgreSQL', /node_modules\/pg|backends\/postgres/],
  ['store: Redis', /ioredis|backends\/redis/],
  ['logging', /pino|sonic-boom|logger\.ts|log-lines\.ts|event-log/],
  ['metrics', /prom-client|src\/metrics\/|engine-metrics\.ts/],
  ['HTTP client (undici, sockets)', /undici|^writev |^writev$|wasm|client-h1|^(read|write)(Buffer|String)?\b/],
  ['HTTP server (fastify)', /fastify|find-my-way|avvio|light-my-request|fast-json-stringify|src\/api\//],
  ['protections', /src\/protection\/|src\/breaker\//],
  ['engine', /src\/engine\//],
  ['timers', /internal\/timers|^(setTimeout|setImmediate|clearTimeout|getLibuvNow)\b/],
  ['promises', /^(runMicrotasks|processTicksAndRejections)\b/],
  ['other retryd', /\.\.\/src\/|packages\/(server|core)/],
  ['other Node', /node:/],
];
if (args.attempts !== undefined || fromFirst !== undefined) {
  const attempts = args.attempts === undefined ? undefined : Number(args.attempts);
  if (attempts !== undefined && !(attempts > 0)) throw new Error(`--attempts must be a positive number, got ${args.attempts}`);
  const byCategory = new Map();
  for (const [key, ms] of selfTime) {
    if (key === '(idle)' || key === '(root)') continue;
    const name = CATEGORIES.find(([, re]) => re.test(key))?.[0] ?? 'other';
    byCategory.set(name, (byCategory.get(name) ?? 0) + ms);
  }
  const per = (ms) => (attempts === undefined ? '' : `  ${((1000 * ms) / attempts).toFixed(1).padStart(7)} µs/attempt`);
  const span = `${fromFirst === undefined ? '' : ` from the first sample in ${fromFirst}`}${untilFirst === undefined ? '' : ` until the first in ${untilFirst}`}`;
  console.log(`\nself time by category${span} (ms, % of busy time${attempts === undefined ? '' : `, per attempt of ${attempts}`})`);
  [...byCategory].sort((a, b) => b[1] - a[1]).forEach(([k, v]) => console.log(`${v.toFixed(0).padStart(8)}  ${((100 * v) / busy).toFixed(1).padStart(5)}%${per(v)}  ${k}`));
  console.log(`${busy.toFixed(0).padStart(8)}  100.0%${per(busy)}  busy in all`);
}
