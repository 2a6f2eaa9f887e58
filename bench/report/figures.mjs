// The report's figures, derived from a results file (pure: the same file always gives the same figures). Every
// retryd figure comes with its ratio to the peer that does the same work and to the machine's ceiling for it.

import { STORE_NAMES, bareStoreId, median, ratioText } from '../service/lib/report.mjs';
import { onAofServer, peerIdOf, placeOf } from './redis-aof.mjs';

export { STORE_NAMES };

/** The peer each store is measured against (the aims of issues 3 and 4): the same kind of server underneath. */
export const PEER_OF_STORE = Object.freeze({ sqlite: 'bullmq', postgres: 'pgboss', redis: 'bullmq' });

/** The store of a retryd W1 contender id (`retryd-sqlite-full`, `retryd-postgres`, `retryd-redis`). */
const storeOfId = (id) => /^retryd-(sqlite|postgres|redis)/.exec(id)?.[1];
/**
 * How a retryd W1 row ran: with the service's default protections or with them off. Rows from before w1.mjs had
 * `--protection` say `on` (the service's flag) although W1 always turned its target's protections off then: only
 * `defaults` means the defaults.
 */
const protectionOf = (row) => (row.protection === 'defaults' ? 'defaults' : 'off');

const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : undefined);
// The usual steps only: a scarce-CPU step (`cpus`, scarce.mjs) is read beside them by its own section, never in their place.
const stepsOf = (results, workload) => results.runs.filter((r) => r.workload === workload && r.cpus === undefined);

/**
 * W1 end to end, as a user waits for it: tasks ÷ (the enqueue's time + the dispatch's time), each phase timed on its
 * own by w1.mjs (every contender's dispatch starts once everything is enqueued, so the phases add up).
 */
function endToEnd(row, tasks) {
  if (tasks === undefined || !(row.enqueuePerSec > 0) || !(row.attemptsPerSec > 0)) return undefined;
  const attempts = row.attempts ?? 3 * tasks;
  return tasks / (tasks / row.enqueuePerSec + attempts / row.attemptsPerSec);
}

/**
 * W1 per contender: attempts/s (median, range), enqueue rate, CPU per attempt, the check; for retryd, ÷ its peer and
 * its `protection` (`defaults` or `off`), and for a defaults row beside an off row of the same configuration,
 * `vsOff` (defaults ÷ off, each round's too); for everyone, ÷ the bare undici loop (the machine's ceiling for these
 * 60,000 requests). `headline`: per store, the row the page leads with, the defaults when they ran (what users run),
 * else the off row (results from before W1 ran the defaults); for Redis, the row on W1's own AOF server (`aof`, read
 * against BullMQ on that server) when it ran, Redis as deployed, with the row on the machine's Redis (no persistence,
 * read against BullMQ there) as its `besides`. Results from before `--redis-aof` lead with the latter. `place`: where a
 * retryd row ran, as the page names it (`Redis, AOF everysec` beside `Redis, no persistence` when both ran).
 */
export function w1Figures(results) {
  const step = stepsOf(results, 'w1')[0];
  const rows = step?.data?.results ?? [];
  const bare = rows.find((r) => r.id === 'bare');
  const offOf = (r) => rows.find((o) => o !== r && o.protection === 'off' && o.protectionPairId !== undefined && o.protectionPairId === r.protectionPairId);
  const contenders = rows
    // A --baseline build's rows are the before of `beforeAfterFigures`, and a --control's the same build again: not
    // contenders of their own; nor are the references (the bare loops).
    .filter((r) => !REFERENCE_IDS.includes(r.id) && r.role !== 'before' && r.role !== 'control')
    .map((r) => {
      const store = storeOfId(r.id);
      const peer = store === undefined ? undefined : rows.find((p) => p.id === peerIdOf(r, PEER_OF_STORE[store]));
      const place = store === undefined ? undefined : placeOf(r, STORE_NAMES[store], rows);
      const protection = store === undefined ? undefined : protectionOf(r);
      const off = protection === 'defaults' ? offOf(r) : undefined;
      return {
        id: r.id,
        kind: store === undefined ? 'peer' : 'retryd',
        store,
        place,
        aof: onAofServer(r),
        protection,
        vsOff: off === undefined ? undefined : { attemptsPerSec: off.attemptsPerSec, ...w1Ratios(r, off), pass: off.pass === true },
        name: r.name ?? r.id,
        /** A short name, for the chart. */
        label: store === undefined ? (r.name ?? r.id) : `retryd, ${place}, ${protection === 'off' ? 'protections off' : 'default protections'}`,
        durability: r.durability ?? '',
        attemptsPerSec: r.attemptsPerSec,
        range: [r.attemptsPerSecMin, r.attemptsPerSecMax],
        enqueuePerSec: r.enqueuePerSec,
        endToEndPerSec: endToEnd(r, step?.data?.tasks),
        cpuMsPerAttempt: r.cpuMsPerAttempt,
        pass: r.pass,
        peer:
          peer === undefined
            ? undefined
            : {
                name: peer.name ?? peer.id,
                attempts: ratio(r.attemptsPerSec, peer.attemptsPerSec),
                enqueue: ratio(r.enqueuePerSec, peer.enqueuePerSec),
                endToEnd: ratio(endToEnd(r, step?.data?.tasks), endToEnd(peer, step?.data?.tasks)),
              },
        ceiling: ratio(r.attemptsPerSec, bare?.attemptsPerSec),
      };
    });
  const ours = contenders.filter((c) => c.kind === 'retryd');
  return {
    step,
    tasks: step?.data?.tasks,
    rounds: step?.data?.rounds,
    /** The least share of the attempts/s with the protections off the defaults must keep (w1.mjs's aim). */
    protectionAim: step?.data?.protectionAim,
    contenders,
    headline: Object.keys(STORE_NAMES).flatMap((store) => {
      const lead = (pool) => pool.find((c) => c.protection === 'defaults') ?? pool[0];
      const mine = ours.filter((c) => c.store === store);
      const aof = mine.filter((c) => c.aof);
      const row = lead(aof.length > 0 ? aof : mine);
      if (row === undefined) return [];
      const besides = aof.length > 0 ? lead(mine.filter((c) => !c.aof)) : undefined;
      return [besides === undefined ? row : { ...row, besides }];
    }),
    bare: referenceOf(bare),
    /**
     * Per store, the bare loop with that store's work on its thread (bare-store.mjs): the ceiling of a durable
     * dispatcher on it. Stores in the order of {@link STORE_NAMES}, with `redis-aof` (on W1's own AOF server) after
     * `redis`; a store whose reference did not run has none. {@link bareStoreKey} gives a retryd row's.
     */
    bareStores: Object.fromEntries(
      Object.keys(STORE_NAMES).flatMap((store) => {
        const ids = store === 'redis' ? [bareStoreId(store), `${bareStoreId(store)}-aof`] : [bareStoreId(store)];
        return ids.flatMap((id) => {
          const row = rows.find((r) => r.id === id);
          return row === undefined ? [] : [[bareStoreKey({ store, aof: onAofServer(row) }), referenceOf(row)]];
        });
      }),
    ),
  };
}

/**
 * W1 over gRPC (`w1grpc`: `w1.mjs --downstream grpc`), per store: attempts/s (median, range), enqueue, CPU per attempt,
 * the check, and beside it the same store's W1 over HTTP row with the same protections (`http`: its attempts/s and
 * CPU, and gRPC ÷ HTTP of each), when W1 ran in the same results.
 */
export function w1GrpcFigures(results) {
  const step = stepsOf(results, 'w1grpc')[0];
  const rows = step?.data?.results ?? [];
  const httpRows = stepsOf(results, 'w1')[0]?.data?.results ?? [];
  return {
    step,
    tasks: step?.data?.tasks,
    rounds: step?.data?.rounds,
    rows: rows
      .filter((r) => storeOfId(r.id) !== undefined && r.role !== 'before' && r.role !== 'control')
      .map((r) => {
        const http = httpRows.find((h) => h.id === r.id.replace('-grpc', ''));
        return {
          id: r.id,
          store: storeOfId(r.id),
          name: r.name ?? r.id,
          attemptsPerSec: r.attemptsPerSec,
          range: [r.attemptsPerSecMin, r.attemptsPerSecMax],
          enqueuePerSec: r.enqueuePerSec,
          cpuMsPerAttempt: r.cpuMsPerAttempt,
          pass: r.pass,
          http:
            http === undefined
              ? undefined
              : {
                  attemptsPerSec: http.attemptsPerSec,
                  cpuMsPerAttempt: http.cpuMsPerAttempt,
                  attempts: ratio(r.attemptsPerSec, http.attemptsPerSec),
                  cpu: ratio(r.cpuMsPerAttempt, http.cpuMsPerAttempt),
                },
        };
      }),
  };
}

/** The W1 contenders that are references, not peers: the bare loop, and the bare loops with a store. */
const REFERENCE_IDS = ['bare', ...Object.keys(STORE_NAMES).map((store) => bareStoreId(store)), `${bareStoreId('redis')}-aof`, bareStoreId('sqlite', true)];

/** The key of `w1Figures().bareStores` that holds the reference for a retryd row (`{ store, aof }`): on the same server. */
export const bareStoreKey = (c) => (c.aof ? `${c.store}-aof` : c.store);

/** A reference's row as the page shows it. */
function referenceOf(row) {
  if (row === undefined) return undefined;
  return {
    name: row.name,
    durability: row.durability,
    attemptsPerSec: row.attemptsPerSec,
    range: [row.attemptsPerSecMin, row.attemptsPerSecMax],
    enqueuePerSec: row.enqueuePerSec,
    attempts: row.attempts,
    cpuMsPerAttempt: row.cpuMsPerAttempt,
    pass: row.pass,
  };
}

/**
 * W2 per store: the backlog's enqueue rate through the API ÷ the same store's rate through the library in-process
 * (the same inserts without HTTP: the reference, if not a strict bound, as that process also generates the load), memory, size, and the due tasks' lag with the backlog ÷ without.
 */
export function w2Figures(results) {
  return stepsOf(results, 'w2').map((step) => {
    const d = step.data;
    if (d?.api === undefined) return { step, store: step.store };
    return {
      step,
      store: step.store,
      backlog: d.backlog,
      due: d.due,
      durability: d.durability,
      enqueuePerSec: d.api.enqueuePerSec,
      libraryPerSec: d.library?.enqueuePerSec,
      ceiling: ratio(d.api.enqueuePerSec, d.library?.enqueuePerSec),
      peakRssMiB: d.api.memoryEnd?.hwmMiB,
      rssWithBacklogMiB: d.api.memoryAfterBacklog?.rssMiB,
      sizeBytes: d.api.sizeEnd?.total,
      lagEmpty: d.empty?.steady?.lag,
      lagBacklog: d.api.dueNow?.steady?.lag,
      lagRise: ratio(d.api.dueNow?.steady?.lag?.p99, d.empty?.steady?.lag?.p99),
    };
  });
}

/**
 * W3 per store, off and on: amplification, time until all succeeded, the peak rate after the recovery ÷ the
 * downstream's capacity (the ceiling it can take), tasks lost; and on ÷ off.
 */
export function w3Figures(results) {
  return stepsOf(results, 'w3').map((step) => {
    const d = step.data;
    const runs = (d?.results ?? []).map((r) => ({
      run: r.run,
      protections: r.protections,
      durability: r.durability,
      amplification: r.amplification,
      allSucceededS: r.allSucceededS,
      peak100PerSecond: r.peak100PerSecond,
      peakOfCapacity: ratio(r.peak100PerSecond, d.capacity),
      lost: r.lost,
      duplicates: r.duplicates,
      error: r.error,
    }));
    const on = runs.find((r) => r.run === 'on');
    const off = runs.find((r) => r.run === 'off');
    return {
      step,
      store: step.store,
      tasks: d?.tasks,
      outageMs: d?.outageMs,
      capacity: d?.capacity,
      limit: d?.limit,
      runs,
      onOffAmplification: ratio(on?.amplification, off?.amplification),
      onOffTime: ratio(on?.allSucceededS, off?.allSucceededS),
      chart: d?.chart,
    };
  });
}

/**
 * W4 per store: dispatch lag p50 / p99 / max and its distribution, CPU per attempt, and the lag's p50 ÷ the disk's
 * durable commit (fdatasync p50, measured by the same run): the floor under a durable store's lag.
 */
export function w4Figures(results) {
  return stepsOf(results, 'w4').map((step) => {
    const r = step.data?.results?.find((x) => x.role !== 'before');
    const fsync = step.data?.machine?.diskSync?.p50;
    if (r === undefined) return { step, store: step.store };
    return {
      step,
      store: step.store,
      rate: r.rate,
      seconds: r.seconds,
      durability: r.durability,
      lag: r.lag,
      lagCurve: r.lagCurve,
      serviceLag: r.serviceLag,
      cpuMsPerAttempt: r.cpuMsPerAttempt,
      missing: r.missing,
      duplicates: r.duplicates,
      fsyncP50: fsync,
      // Redis without AOF commits nothing to disk: no fsync floor to compare with.
      ceiling: step.store === 'redis' && !/AOF on/.test(r.durability ?? '') ? undefined : ratio(r.lag.p50, fsync),
    };
  });
}

/**
 * W4 against its ceilings in paired rounds (`w4paired`, w4-paired.mjs), per store: retryd, the relay with the store's
 * work (`storeRelay`) and the bare relay (`bareRelay`) back to back in every round. `rate`; `rounds`, their number;
 * `medians`, of each one's lag p50 / p99 / max and CPU ms a task, and of the rounds' ratios of lag p99 (`ratios`:
 * `retrydOverBare`, the one W4's aim is judged on, `retrydOverStore`, `storeOverBare`); `perRound`, each round's
 * ratios. A step that wrote nothing has `store` alone.
 */
export function w4PairedFigures(results) {
  return stepsOf(results, 'w4paired').map((step) => {
    const d = step.data;
    if (d?.medians === undefined) return { step, store: step.store };
    return { step, store: step.store, rate: d.rate, seconds: d.seconds, rounds: d.rounds.length, medians: d.medians, perRound: d.rounds.map((r) => r.ratios) };
  });
}

/**
 * W5 per store and variant (two targets over the API, two tenants through the library): the time of B's tasks from
 * B's enqueue call (first, p50, max), A's rate alone and over the window after it, and how much of A's backlog was
 * left when B came. `cycleMs` is one claim cycle as measured: the time a slot takes to come round again while A keeps
 * every slot busy (slots ÷ A's rate alone: A's downstream delay plus the service's own time between two of A's
 * attempts on a slot). Within it every slot has been freed and claimed again, so a fair claim has offered B one by
 * then, once B's enqueue is answered.
 */
export function w5Figures(results) {
  return stepsOf(results, 'w5').flatMap((step) => {
    const d = step.data;
    if (d?.rows === undefined) return [{ step, store: step.store, error: true }];
    return d.rows
      .filter((r) => r.role !== 'before' && r.variant !== 'hang')
      .map((r) => ({
        step,
        store: r.storeKind,
        variant: r.variant,
        error: r.error === true,
        bTasks: d.bTasks,
        aTasks: d.aTasks,
        aDelayMs: d.aDelayMs,
        concurrency: d.concurrency,
        cycleMs: r.aAlonePerSec > 0 ? (1_000 * d.concurrency) / r.aAlonePerSec : undefined,
        aLeftAtT0: r.aLeftAtT0,
        bEnqueueMs: r.bEnqueueMs,
        bFirstMs: r.bFirstMs,
        /** B's first task after B's enqueue was answered (negative: it was sent before the answer reached the caller). */
        bFirstAfterAckMs: r.bFirstMs === undefined || r.bEnqueueMs === undefined ? undefined : r.bFirstMs - r.bEnqueueMs,
        bP50Ms: r.bP50Ms,
        bMaxMs: r.bMaxMs,
        timedOut: r.timedOut === true,
        aAlonePerSec: r.aAlonePerSec,
        aWindowPerSec: r.aWindowPerSec,
        aWindowS: d.aWindowS,
        aWhileB: ratio(r.aWindowPerSec, r.aAlonePerSec),
      }));
  });
}

/**
 * W5's hang case per store (w5.mjs --variant hang, through the library): tenant b's tasks alone, then beside tenant
 * a's tasks hanging on a target that never answers (no protection): B's p50 and p99 from its enqueue both times, and
 * how many of a's attempts hung when b came (the slots a held).
 */
export function w5HangFigures(results) {
  return stepsOf(results, 'w5').flatMap((step) => {
    const d = step.data;
    return (d?.rows ?? [])
      .filter((r) => r.role !== 'before' && r.variant === 'hang')
      .map((r) => ({
        step,
        store: r.storeKind,
        error: r.error === true,
        bTasks: d.bTasks,
        hangTasks: d.hangTasks,
        concurrency: d.concurrency,
        hungAtB: r.hungAtB,
        bAloneP50Ms: r.bAloneP50Ms,
        bAloneP99Ms: r.bAloneP99Ms,
        bBesideP50Ms: r.bBesideP50Ms,
        bBesideP99Ms: r.bBesideP99Ms,
        bBesideMaxMs: r.bBesideMaxMs,
        timedOut: r.timedOut === true,
      }));
  });
}

/**
 * W7 per store (w7.mjs): per case, its run with the default protections and its run with them off (`defaults`, `off`:
 * w7.mjs's rows: `finished`, `doneMs`, `atLeastMs`, `succeeded`, `pending`, `callsPerTask`, `requests`,
 * `busiest100ms`, `lost`, `goodputPerSecond`, `measured` (what the run measured for the aim, in words: d's and e's
 * goodput, e's timeouts, g's lag of the good targets with the bad one, with it healthy and without its tasks), `error`), defaults ÷ off (`ratio`:
 * `time`, `calls`, `atLeast` when the defaults run was stopped), and W7's aim for the case (`aim`) with whether the
 * defaults met it (`met`: true, false, or undefined when it cannot be told, `untold` saying why: e.g. the off run did
 * not finish). `dead`: case f, whose runs last as long as they are told to (`deadSeconds`), so only their calls
 * compare. `slow`: case e's target (`concurrency`, `latencyMs`, `capacityPerSecond`); `targets` and `lagSlackMs`: case
 * g's (results from before e and g have none of them).
 */
export function w7Figures(results) {
  return stepsOf(results, 'w7').map((step) => {
    const d = step.data;
    const rows = d?.results ?? [];
    const cases = [...new Set(rows.map((r) => r.case))].map((id) => {
      const [defaults, off] = ['defaults', 'off'].map((run) => rows.find((r) => r.case === id && r.run === run));
      const any = defaults ?? off;
      const untold = defaults?.aimUntold ?? 'off did not finish';
      return { id, title: any.title ?? id, dead: any.dead === true, defaults, off, ratio: defaults?.ratio ?? {}, aim: defaults?.aimText, met: defaults?.aimMet, untold };
    });
    const finished = rows.filter((r) => r.finished);
    return {
      step,
      store: step.store,
      tasks: d?.tasks,
      policy: d?.policy,
      capacity: d?.capacity,
      deadSeconds: d?.deadSeconds,
      timeoutSeconds: d?.timeoutSeconds,
      slow: d?.slow,
      targets: d?.targets,
      lagSlackMs: d?.lagSlackMs,
      cases,
      /** Tasks lost over the finished runs (must be 0), and whether every run ran without an error. */
      lost: finished.reduce((n, r) => n + (r.lost ?? 0), 0),
      clean: d !== undefined && rows.every((r) => r.error === undefined),
    };
  });
}

/**
 * W6 through the transactional enqueue (w6-transactional.mjs, PostgreSQL only): `enqueueBatch` of `@retryd/server/pg`
 * on the application's own connections, beside pg-boss's `insert` on the same client, in the same run. Per step: its
 * sizes (`tasks`, `batch` a transaction, `concurrency` transactions in flight, `rounds`), the server's `durability` as
 * read back (`{ label, durable }`), each side's `rows` (tasks/s, the median and each round's), `retrydPerSec`,
 * `peerPerSec` and `peer` (absent with `--peer none`), and `ratio`: retryd ÷ the peer.
 */
export function w6txFigures(results) {
  return stepsOf(results, 'w6tx').map((step) => {
    const d = step.data;
    if (d?.retrydPerSec === undefined) return { step, store: step.store };
    return {
      step,
      store: step.store,
      tasks: d.tasks,
      batch: d.batch,
      concurrency: d.concurrency,
      rounds: d.rounds,
      durability: d.durability,
      rows: d.rows ?? [],
      peer: d.peer,
      retrydPerSec: d.retrydPerSec,
      peerPerSec: d.peerPerSec,
      ratio: ratio(d.retrydPerSec, d.peerPerSec),
    };
  });
}

/** W8's aim for the store's size: over the run's second half within this share of its size at half-time. */
export const W8_SIZE_SPREAD = 0.1;

/**
 * W8 per store (w8.mjs): the store's size at half-time and over the second half (`deviation`: the worst share off
 * it), the service's RSS, the first attempts' dispatch lag (`lagWarm`: after the first 10 s, as W4 measures it), the
 * tasks purged a second once steady, and what was lost (tasks not read back as their key meant, duplicates, keys
 * never requested: must be 0); `w4P99`: W4's lag p99 on the same store in the same results, what the lag is judged
 * against (undefined without a W4 there).
 */
export function w8Figures(results) {
  const w4 = w4Figures(results);
  return stepsOf(results, 'w8').map((step) => {
    const d = step.data;
    if (d?.sizeAt === undefined) return { step, store: step.store };
    const w4Of = w4.find((w) => w.store === step.store && w.lag !== undefined);
    const lost = d.check.lost + d.check.otherStatus + d.check.noExpiry + d.downstream.duplicates + d.downstream.neverRequested;
    return {
      step,
      store: step.store,
      minutes: d.minutes,
      rate: d.rate,
      retentionMs: d.retentionMs,
      durability: d.durability,
      sizeOf: d.sizeOf,
      sizeAt: d.sizeAt,
      sizeLastHalf: d.sizeLastHalf,
      rss: d.rss,
      lagWarm: d.lagWarm,
      purgedPerSec: d.purgedPerSecSteady,
      lost,
      w4P99: w4Of?.lag?.p99,
      /** W4's figure came from another run than this step (`--merge`): a day's noise may sit between the two. */
      w4Elsewhere: w4Of !== undefined && w4Of.step.from?.startedAt !== step.from?.startedAt,
    };
  });
}

/**
 * W1's `after` row ÷ `other`'s (the build before, the control, or the same build with the protections off): the
 * medians' attempts/s, each round's (the two ran back to back in it), the median of those, and CPU per attempt.
 */
function w1Ratios(after, other) {
  const perRound = (after?.runs ?? []).map((r, i) => ratio(r.attemptsPerSec, other.runs?.[i]?.attemptsPerSec)).filter((x) => x !== undefined);
  return {
    ratio: ratio(after?.attemptsPerSec, other.attemptsPerSec),
    perRound,
    roundsMedian: perRound.length === 0 ? undefined : median(perRound),
    cpu: ratio(after?.cpuMsPerAttempt, other.cpuMsPerAttempt),
  };
}

/**
 * This build against `--baseline`'s, per store, when the run had one: W1's attempts/s and CPU per attempt, with the
 * ratio of each round (the pair ran back to back in every round), and this build against itself (`control`: W1's
 * `--control`, absent from runs made before it) the same way; W4's dispatch lag p99 and CPU per attempt. `from`: the
 * earlier run these steps were taken over from (`--merge`), whose build is then "this build".
 */
export function beforeAfterFigures(results) {
  if (results.baseline === undefined) return undefined;
  const w1Step = stepsOf(results, 'w1')[0];
  const w1Rows = w1Step?.data?.results ?? [];
  const w1 = w1Rows
    .filter((r) => r.role === 'before')
    .map((before) => {
      const after = w1Rows.find((r) => r.role === 'after' && r.pairId === before.pairId);
      const control = w1Rows.find((r) => r.role === 'control' && r.pairId === before.pairId);
      return {
        store: storeOfId(before.id),
        after: after?.attemptsPerSec,
        before: before.attemptsPerSec,
        ...w1Ratios(after, before),
        pass: after?.pass === true && before.pass === true,
        control: control === undefined ? undefined : { ...w1Ratios(after, control), pass: control.pass === true },
      };
    });
  const w4 = stepsOf(results, 'w4')
    .map((step) => {
      const [after, before] = ['after', 'before'].map((role) => step.data?.results?.find((r) => r.role === role));
      if (after === undefined || before === undefined) return undefined;
      const rounds = (r) => r.runs ?? [r];
      return {
        store: step.store,
        after: after.lag?.p99,
        before: before.lag?.p99,
        ratio: ratio(after.lag?.p99, before.lag?.p99),
        perRound: rounds(after).map((r, i) => ratio(r.lag?.p99, rounds(before)[i]?.lag?.p99)).filter((x) => x !== undefined),
        cpu: ratio(after.cpuMsPerAttempt, before.cpuMsPerAttempt),
        pass: after.missing === 0 && after.duplicates === 0 && before.missing === 0 && before.duplicates === 0,
      };
    })
    .filter((x) => x !== undefined);
  const w4Steps = stepsOf(results, 'w4').filter((step) => w4.some((r) => r.store === step.store));
  const from = (w1.length > 0 ? w1Step : w4Steps[0])?.from;
  return { baseline: results.baseline, from, w1, w4 };
}

/**
 * What a pending task takes in each store (store-space.mjs): bytes per task of each table, index or kind of key, and
 * the total; `peer`, when the step measured it: the same of the peer on the same server (pg-boss beside PostgreSQL,
 * BullMQ beside Redis) keeping the same calls as jobs, with its `name`.
 */
export function spaceFigures(results) {
  return stepsOf(results, 'space').map((step) => {
    const d = step.data?.stores?.find((s) => s.store === step.store);
    const p = step.data?.peers?.find((x) => x.peer === d?.peer);
    const peer = p === undefined ? undefined : { name: p.name, rows: p.rows ?? [], total: p.totalBytesPerTask };
    return { step, store: step.store, tasks: step.data?.tasks, rows: d?.rows ?? [], total: d?.totalBytesPerTask, peer };
  });
}

/**
 * The machine's ceilings the enqueue and W4 aims are read against. `insert`: per store, its `insertTasks` alone (no
 * HTTP, parsing or checks; insert-floor.mjs), each measured row and the best rate the service's own write pattern
 * reaches (`ceilingPerSec`). `ingest`: per store, W6's requests through the least an HTTP enqueue does, beside retryd
 * and the peer's bulk insert in the same run (ingest-floor.mjs): the rates of each (`floorPerSec`, `retrydPerSec`,
 * `peerPerSec`) and the peer. `relay`: W4's load through a bare relay (w4-ceiling.mjs) that commits to disk (`sync`:
 * the ceiling of SQLite and PostgreSQL) or not (Redis without AOF), with the stores it stands for; and, `storeWork`
 * set to the store, through the relay with W4's work on that store (`--store`), with its server's CPU per task.
 */
export function ceilingFigures(results) {
  const steps = stepsOf(results, 'ceilings');
  const insert = steps
    .filter((step) => step.script === 'insert-floor')
    .map((step) => ({ step, store: step.store, rows: step.data?.rows ?? [], ceilingPerSec: step.data?.ceilingTasksPerSec }));
  const ingest = steps
    .filter((step) => step.script === 'ingest-floor')
    .map((step) => ({
      step,
      store: step.store,
      peer: step.data?.peer,
      rows: step.data?.rows ?? [],
      floorPerSec: step.data?.floorPerSec,
      retrydPerSec: step.data?.retrydPerSec,
      peerPerSec: step.data?.peerPerSec,
    }));
  const relay = steps
    .filter((step) => step.script === 'w4-ceiling' && !step.args.includes('--throughput'))
    .map((step) => ({ step, stores: step.store.split(','), sync: step.data?.sync, storeWork: step.data?.store ?? undefined, lag: step.data?.lag, rounds: step.data?.rounds ?? [] }));
  return { insert, ingest, relay };
}

/**
 * The relays W4 on `store` is read against, of `ceilingFigures(…).relay`: `bare`, the bare relay that stands for it
 * (durable for SQLite and PostgreSQL, not synced for Redis), and `withStore`, the relay with that store's work; each
 * undefined when the run has none with a lag.
 */
export function w4RelaysOf(relay, store) {
  return {
    bare: relay.find((r) => r.storeWork === undefined && r.stores.includes(store) && r.lag !== undefined),
    withStore: relay.find((r) => r.storeWork === store && r.lag !== undefined),
  };
}

/**
 * The headline: per store, retryd's W1 attempts/s (with the default protections when they ran) ÷ its peer's, ÷ the
 * ceiling and ÷ itself with the protections off; W3's amplification on and off; W4's lag p99; W6 through the
 * transactional enqueue ÷ pg-boss's `insert`; W7's aims met and not; W8's size and lag.
 * `from`: the earlier run a figure's step was taken over from (`--merge`), if it was.
 */
export function headline(results) {
  const w1 = w1Figures(results);
  const { relay } = ceilingFigures(results);
  return {
    w1: w1.headline.map((c) => ({
      store: c.store,
      aof: c.aof,
      from: w1.step.from,
      durability: c.durability,
      protection: c.protection,
      vsOff: c.vsOff,
      peer: c.peer,
      ceiling: c.ceiling,
      ...(c.besides === undefined ? {} : { besides: { durability: c.besides.durability, protection: c.besides.protection, peer: c.besides.peer } }),
    })),
    w3: w3Figures(results).map((w) => ({ store: w.store, from: w.step.from, off: w.runs.find((r) => r.run === 'off')?.amplification, on: w.runs.find((r) => r.run === 'on')?.amplification })),
    w4: w4Figures(results).map((w) => {
      const { bare, withStore } = w4RelaysOf(relay, w.store);
      return { store: w.store, from: w.step.from, p99: w.lag?.p99, relayP99: bare?.lag.p99, storeRelayP99: withStore?.lag.p99 };
    }),
    w7: w7Figures(results)
      .filter((w) => w.cases.length > 0)
      .map((w) => ({
        store: w.store,
        from: w.step.from,
        cases: w.cases.length,
        met: w.cases.filter((c) => c.met === true).map((c) => c.id),
        notMet: w.cases.filter((c) => c.met === false).map((c) => c.id),
        untold: w.cases.filter((c) => c.met === undefined).map((c) => c.id),
        lost: w.lost,
      })),
    w6tx: w6txFigures(results)
      .filter((w) => w.ratio !== undefined)
      .map((w) => ({ store: w.store, from: w.step.from, durable: w.durability?.durable === true, ratio: w.ratio, peer: w.peer, retrydPerSec: w.retrydPerSec, peerPerSec: w.peerPerSec })),
    w8: w8Figures(results)
      .filter((w) => w.sizeAt !== undefined)
      .map((w) => ({ store: w.store, from: w.step.from, deviation: w.sizeLastHalf.deviation, p99: w.lagWarm.p99, w4P99: w.w4P99, lost: w.lost })),
  };
}

/**
 * The issues' aims (as the scripts state them), each with the figure it is judged on: `{ aim, figure, unit, met,
 * ceiling? }`, or `figureText` where the figure is several (W7's), and `unknown` where it cannot be told. `ceiling`,
 * where the machine's ceiling for the aim was measured in the same run: `{ text, beyond }`, `beyond` when the ceiling
 * itself misses the aim (then no build of retryd's present design can meet it here).
 */
export function aims(results) {
  const rows = [];
  const w1 = w1Figures(results);
  const { insert, ingest, relay } = ceilingFigures(results);
  const w1Aims = { sqlite: 2, postgres: 3, redis: 1.5 };
  const peerRow = (c) => w1.step?.data?.results?.find((r) => r.id === peerIdOf(c, PEER_OF_STORE[c.store]));
  for (const c of w1.headline.filter((c) => c.peer !== undefined)) {
    const factor = w1Aims[c.store];
    // The bare loop makes W1's requests with nothing stored or scheduled: no retry service can pass it here. The
    // bare loop with the store's work (claims, completions and attempt log as the engine writes them, on the same
    // thread) is the ceiling of a durable dispatcher on that store: the one the aim is judged beyond or within.
    const bare = ratio(w1.bare?.attemptsPerSec, peerRow(c)?.attemptsPerSec);
    const durable = ratio(w1.bareStores[bareStoreKey(c)]?.attemptsPerSec, peerRow(c)?.attemptsPerSec);
    const texts = [bare === undefined ? undefined : `the bare loop: ${bare.toFixed(2)}× ${c.peer.name}`];
    // A reference that came out below retryd itself bounded nothing in this run: shown, not judged by.
    const bounds = (r) => r !== undefined && r >= c.peer.attempts;
    if (durable !== undefined) texts.push(`with the store's work: ${durable.toFixed(2)}×${bounds(durable) ? '' : ' (below retryd in this run: no bound)'}`);
    const binding = bounds(durable) ? durable : bare;
    const ceiling = binding === undefined ? undefined : { text: texts.filter(Boolean).join('; '), beyond: binding < factor };
    rows.push({ aim: `W1 ${c.place}: ≥ ${factor}× ${c.peer.name} attempts/s`, figure: c.peer.attempts, unit: '×', met: c.peer.attempts >= factor, ceiling });
    if (c.store === 'sqlite' && c.peer.endToEnd !== undefined) {
      // The store's insert alone, then the bare loop: W1 end to end with nothing of retryd's own but the insert; and
      // the bare loop with the store's work, which inserts the tasks as the service does, then dispatches them.
      const floor = insert.find((i) => i.store === c.store)?.ceilingPerSec;
      const bound = ratio(endToEnd({ enqueuePerSec: floor, attemptsPerSec: w1.bare?.attemptsPerSec }, w1.tasks), endToEnd(peerRow(c), w1.tasks));
      const bareStore = w1.bareStores.sqlite;
      const durableBound = bareStore === undefined ? undefined : ratio(endToEnd(bareStore, w1.tasks), endToEnd(peerRow(c), w1.tasks));
      const texts = [bound === undefined ? undefined : `the store's insert alone, then the bare loop: ${bound.toFixed(2)}× ${c.peer.name}`];
      const durableBounds = durableBound !== undefined && durableBound >= c.peer.endToEnd;
      if (durableBound !== undefined) {
        texts.push(`the bare loop with the store's work, end to end: ${durableBound.toFixed(2)}×${durableBounds ? '' : ' (below retryd in this run: no bound)'}`);
      }
      const binding = durableBounds ? durableBound : bound;
      const ceiling = binding === undefined ? undefined : { text: texts.filter(Boolean).join('; '), beyond: binding < 2 };
      rows.push({ aim: `W1 SQLite end to end (enqueue + dispatch): ≥ 2× ${c.peer.name}`, figure: c.peer.endToEnd, unit: '×', met: c.peer.endToEnd >= 2, ceiling });
    }
  }
  // What users run costs little: the default protections beside none, back to back in every round of one run.
  // Judged on the median of the rounds' ratios: each compares two runs made back to back, in the same conditions.
  for (const c of w1.headline.filter((c) => c.vsOff?.roundsMedian !== undefined && w1.protectionAim !== undefined)) {
    rows.push({ aim: `W1 ${c.place}: the default protections ≥ ${w1.protectionAim}× the attempts/s with them off (median of the rounds)`, figure: c.vsOff.roundsMedian, unit: '×', met: c.vsOff.roundsMedian >= w1.protectionAim });
  }
  // Issue 14's enqueue aims, from W1's enqueue (W6's request shape: the batch API, 1,000 a request, 4 in flight),
  // against the store's own insert with nothing else to do, and against W6's requests through the least an HTTP
  // enqueue does, whose ratio to the peer is measured in its own run beside the peer (the binding ceiling when run).
  const tasksPerSec = (n) => `${Math.round(n).toLocaleString('en-US')} tasks/s`;
  for (const c of w1.headline.filter((c) => c.enqueuePerSec !== undefined)) {
    const floor = insert.find((i) => i.store === c.store)?.ceilingPerSec;
    const alone = floor === undefined ? undefined : `the store's insert alone: ${tasksPerSec(floor)}`;
    const http = ingest.find((i) => i.store === c.store && i.floorPerSec !== undefined);
    const httpText = (withPeer) =>
      http === undefined ? undefined : `W6 through the least HTTP enqueue: ${tasksPerSec(http.floorPerSec)}${withPeer ? ` (${/** @type {number} */ (ratio(http.floorPerSec, http.peerPerSec)).toFixed(2)}× ${http.peer?.name} beside it)` : ''}`;
    if (c.store === 'sqlite') {
      const binding = http?.floorPerSec ?? floor;
      const text = [alone, httpText(false)].filter(Boolean).join('; ');
      const ceiling = binding === undefined ? undefined : { text, beyond: binding < 100_000 };
      rows.push({ aim: 'Enqueue SQLite: ≥ 100,000 tasks/s', figure: c.enqueuePerSec, unit: ' tasks/s', met: c.enqueuePerSec >= 100_000, ceiling });
    }
    const factor = { postgres: 1, redis: 2 }[c.store];
    if (factor !== undefined && c.peer?.enqueue !== undefined) {
      const vsPeer = ratio(floor, peerRow(c)?.enqueuePerSec);
      const binding = http === undefined ? vsPeer : ratio(http.floorPerSec, http.peerPerSec);
      const text = [alone === undefined || vsPeer === undefined ? alone : `${alone} (${vsPeer.toFixed(2)}× ${c.peer.name})`, httpText(true)].filter(Boolean).join('; ');
      const ceiling = binding === undefined ? undefined : { text, beyond: binding < factor };
      rows.push({ aim: `Enqueue ${c.place}: ≥ ${factor}× the bulk insert of ${c.peer.name}`, figure: c.peer.enqueue, unit: '×', met: c.peer.enqueue >= factor, ceiling });
    }
  }
  for (const w of w2Figures(results).filter((w) => w.peakRssMiB !== undefined)) {
    const mb = (w.peakRssMiB * 2 ** 20) / 1e6;
    rows.push({ aim: `W2 ${STORE_NAMES[w.store]}: ${w.backlog.toLocaleString('en-US')} pending under 300 MB resident (peak)`, figure: mb, unit: ' MB', met: mb < 300 });
    if (w.lagRise !== undefined) rows.push({ aim: `W2 ${STORE_NAMES[w.store]}: no rise in dispatch lag p99 with the backlog`, figure: w.lagRise, unit: '×', met: w.lagRise <= 1 });
  }
  for (const w of w3Figures(results)) {
    const on = w.runs.find((r) => r.run === 'on');
    if (on === undefined) continue;
    rows.push({ aim: `W3 ${STORE_NAMES[w.store]}, protections on: amplification ≤ 1.2×`, figure: on.amplification, unit: '×', met: on.amplification <= 1.2 });
    // Compared as counts, as w3.mjs does: 550 / 500 - 1 is above 0.1 in floating point.
    rows.push({ aim: `W3 ${STORE_NAMES[w.store]}, protections on: peak within 10% of the ${w.limit}/s limit`, figure: on.peak100PerSecond, unit: '/s', met: Math.abs(on.peak100PerSecond - w.limit) <= w.limit / 10 });
    const lost = w.runs.reduce((n, r) => n + (r.lost ?? 0), 0);
    rows.push({ aim: `W3 ${STORE_NAMES[w.store]}: nothing lost, protections off and on`, figure: lost, unit: '', met: lost === 0 && w.runs.every((r) => r.error === undefined) });
  }
  for (const w of w4Figures(results).filter((w) => w.lag !== undefined)) {
    const { bare, withStore } = w4RelaysOf(relay, w.store);
    const texts = [
      bare === undefined ? undefined : `a bare relay${bare.sync ? ', durable' : ', not synced'}: p99 ${bare.lag.p99.toFixed(1)} ms`,
      withStore === undefined ? undefined : `the bare relay with the store's work: p99 ${withStore.lag.p99.toFixed(1)} ms`,
    ].filter(Boolean);
    const binding = Math.min(...[bare, withStore].filter((r) => r !== undefined).map((r) => r.lag.p99));
    const ceiling = texts.length === 0 ? undefined : { text: texts.join('; '), beyond: binding >= 2 };
    rows.push({ aim: `W4 ${STORE_NAMES[w.store]}: dispatch lag p99 < 2 ms`, figure: w.lag.p99, unit: ' ms', met: w.lag.p99 < 2, ceiling });
  }
  // Issue 8's fairness: B's first task starts within one claim cycle (one turn of A's slots), not after A's backlog.
  for (const w of w5Figures(results).filter((w) => !w.error && w.bFirstAfterAckMs !== undefined && w.cycleMs !== undefined)) {
    const who = w.variant === 'tenants' ? 'tenant' : 'target';
    rows.push({
      aim: `W5 ${STORE_NAMES[w.store]}, two ${w.variant}: the quiet ${who}'s first task within one claim cycle (${w.cycleMs.toFixed(1)} ms) of its enqueue's answer`,
      figure: w.bFirstAfterAckMs,
      unit: ' ms',
      met: !w.timedOut && w.bFirstAfterAckMs <= w.cycleMs,
    });
  }
  // Issue 39: a tenant whose target hangs does not hold up another's: B beside it within 100 ms of its p99 alone.
  for (const w of w5HangFigures(results).filter((w) => !w.error && w.bAloneP99Ms !== undefined)) {
    rows.push({
      aim: `W5 ${STORE_NAMES[w.store]}, a hanging neighbour: B's p99 beside ${w.hangTasks} hanging tasks of another tenant (its target's protections off) within 100 ms of its p99 alone (${w.bAloneP99Ms.toFixed(0)} ms)`,
      figure: w.bBesideP99Ms,
      unit: ' ms',
      met: !w.timedOut && w.bBesideP99Ms !== undefined && w.bBesideP99Ms <= w.bAloneP99Ms + 100,
    });
  }
  // Issue 38: W6 in the application's own transaction at least as fast as pg-boss's `insert` in it, committed durably.
  for (const w of w6txFigures(results).filter((w) => w.ratio !== undefined)) {
    const durable = w.durability?.durable === true;
    rows.push({
      aim: `W6 transactional (${STORE_NAMES[w.store]}): ≥ 1.0× ${w.peer.name} \`insert\` tasks/s, durable`,
      figureText: `${ratioText(w.ratio)} (${Math.round(w.retrydPerSec).toLocaleString('en-US')} ÷ ${Math.round(w.peerPerSec).toLocaleString('en-US')} tasks/s)${durable ? '' : `; **${w.durability?.label ?? 'durability unknown'}**`}`,
      met: w.ratio >= 1 && durable,
    });
  }
  // W7: the defaults must never starve a target that answers, nor hammer one that does not; nothing lost.
  for (const w of w7Figures(results)) {
    for (const c of w.cases.filter((c) => c.aim !== undefined)) {
      const r = c.defaults;
      // Results from before w7.mjs said what a run measured for its aim had d's goodput alone.
      const goodput =
        r.measured !== undefined
          ? `; ${r.measured}`
          : r.goodputPerSecond === undefined
            ? ''
            : `; goodput ${Math.round(r.goodputPerSecond).toLocaleString('en-US')}/s, ${r.callsPerTask?.toFixed(2)} calls/task`;
      const figureText = c.dead
        ? `${r.requests?.toLocaleString('en-US') ?? '–'} calls in ${w.deadSeconds} s`
        : `time ${ratioText(c.ratio.time, c.ratio.atLeast)}, calls ${ratioText(c.ratio.calls, c.ratio.atLeast)} of off${goodput}`;
      rows.push({ aim: `W7 ${STORE_NAMES[w.store]}, ${c.id} (${c.title}): ${c.aim}`, figureText, met: c.met === true, unknown: c.met === undefined });
    }
    if (w.cases.length > 0) rows.push({ aim: `W7 ${STORE_NAMES[w.store]}: nothing lost, defaults and off`, figure: w.lost, unit: '', met: w.lost === 0 && w.clean });
  }
  // W8: retention keeps the store flat over a long run, at no cost to dispatch; nothing lost.
  for (const w of w8Figures(results).filter((w) => w.sizeAt !== undefined)) {
    const name = STORE_NAMES[w.store];
    rows.push({ aim: `W8 ${name}: the store's size over the second half within ±${W8_SIZE_SPREAD * 100}% of its size at half-time`, figureText: `worst ${(w.sizeLastHalf.deviation * 100).toFixed(1)}% (${(w.sizeAt.bytes / 2 ** 20).toFixed(1)} MiB at half-time)`, met: w.sizeLastHalf.deviation <= W8_SIZE_SPREAD });
    if (w.w4P99 !== undefined) rows.push({ aim: `W8 ${name}: dispatch lag p99 no worse than W4's (${w.w4P99.toFixed(2)} ms)`, figure: w.lagWarm.p99, unit: ' ms', met: w.lagWarm.p99 <= w.w4P99 });
    rows.push({ aim: `W8 ${name}: nothing lost`, figure: w.lost, unit: '', met: w.lost === 0 });
  }
  // Issue 14's space per pending task (W2-like tasks).
  const spaceAims = { sqlite: 400, postgres: 400, redis: 700 };
  for (const w of spaceFigures(results).filter((w) => w.total !== undefined)) {
    const most = spaceAims[w.store];
    // No ceiling bounds a store's space; the peer's own bytes for the same calls, measured in the same step, stand
    // beside the figure instead (never "beyond the ceiling").
    const peer = w.peer?.total === undefined ? undefined : { text: `no ceiling; ${w.peer.name}, the same calls as jobs: ${Math.round(w.peer.total).toLocaleString('en-US')} B (retryd ${(w.total / w.peer.total).toFixed(2)}× of it)`, beyond: false };
    rows.push({ aim: `Space ${STORE_NAMES[w.store]}: ≤ ${most} bytes per pending task`, figure: w.total, unit: ' B', met: w.total <= most, ceiling: peer });
  }
  return rows;
}
