// The page's section for the scarce-CPU run (`--cpus N`, scarce.mjs): issue 45's aims, on the usual cores and on N,
// side by side, read from the same figures as the rest of the page.

import { fmt } from '../service/lib/report.mjs';
import { PEER_OF_STORE, STORE_NAMES, bareStoreKey, ceilingFigures, w1Figures, w4Figures, w4PairedFigures, w4RelaysOf } from './figures.mjs';
import { resultsOnCores } from './scarce.mjs';

const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : undefined);

/** The aims of issue 45 that the scarce run is read against. */
export const SCARCE_AIMS = Object.freeze({ cpuPerAttempt: 1.2, w1SqliteVsBullmq: 2, w4LagVsRelay: 1.2 });

/**
 * Per setting (`usual`, `scarce`), the figures of issue 45's aims: per store, retryd's CPU per attempt (W1, the
 * headline row) ÷ the bare loop's with the same store's work; W1 SQLite ÷ BullMQ attempts/s; per store, W4's lag p99
 * ÷ the bare relay's p99 (the relay that syncs for SQLite and PostgreSQL, the one that does not for Redis), and beside it
 * the p99 of the relay with W4's work on that store (`storeRelay`, when the run has it); per store, W4 in paired rounds
 * (`paired`, {@link w4PairedFigures}, when the run has it); the bare loop with SQLite's work ÷ BullMQ (`sqliteBareVsPeer`),
 * the ceiling of the aim on SQLite.
 */
export function scarceFigures(results) {
  const of = (scarce) => {
    const view = resultsOnCores(results, scarce);
    const w1 = w1Figures(view);
    const relays = ceilingFigures(view).relay;
    const sqlite = w1.headline.find((c) => c.store === 'sqlite');
    return {
      cpu: Object.fromEntries(w1.headline.map((c) => [c.store, { retryd: c.cpuMsPerAttempt, bare: w1.bareStores[bareStoreKey(c)]?.cpuMsPerAttempt }])),
      sqliteVsPeer: sqlite?.peer?.attempts,
      sqliteBareVsPeer: ratio(w1.bareStores.sqlite?.attemptsPerSec, w1.step?.data?.results?.find((r) => r.id === PEER_OF_STORE.sqlite)?.attemptsPerSec),
      lag: Object.fromEntries(
        w4Figures(view).map((w) => {
          const { bare, withStore } = w4RelaysOf(relays, w.store);
          return [w.store, { retryd: w.lag?.p99, relay: bare?.lag.p99, storeRelay: withStore?.lag.p99, rate: w.rate }];
        }),
      ),
      paired: Object.fromEntries(w4PairedFigures(view).filter((p) => p.medians !== undefined).map((p) => [p.store, p])),
    };
  };
  return { usual: of(false), scarce: of(true) };
}

const times = (r) => (r === undefined ? '–' : `${r.toFixed(2)}×`);
const judged = (r, ok) => (r === undefined ? '–' : ok(r) ? `${times(r)}, met` : `**${times(r)}, missed**`);

/**
 * W4's lag aim as paired rounds read it: the median of the rounds' retryd ÷ bare relay, each round's, the medians' lag
 * p99, and the relay with the store's work beside it, beyond the ceiling where that relay's own median misses the aim.
 */
function pairedCell(p) {
  if (p === undefined) return '–';
  const met = (v) => v <= SCARCE_AIMS.w4LagVsRelay;
  const { ratios, retryd, storeRelay, bareRelay } = p.medians;
  const beyond = !met(ratios.retrydOverBare) && !met(ratios.storeOverBare) ? ', beyond the ceiling' : '';
  const byRound = p.perRound.map((r) => times(r.retrydOverBare)).join(', ');
  return (
    `median of ${fmt(p.rounds)} round${p.rounds === 1 ? '' : 's'} ${judged(ratios.retrydOverBare, met)}${beyond} (${byRound}; ${fmt(p.rate)} tasks/s); ` +
    `lag p99 ${fmt(retryd.p99, 1)} / ${fmt(bareRelay.p99, 1)} ms; the relay with the store's work ${fmt(storeRelay.p99, 1)} ms (${times(ratios.storeOverBare)} the bare relay's; retryd ${times(ratios.retrydOverStore)} of it)`
  );
}

/** The section, or `undefined` when the run had no scarce steps. */
export function scarceSection(results) {
  const scarce = results.runs.filter((r) => r.cpus !== undefined);
  if (scarce.length === 0) return undefined;
  const cpus = scarce[0].cpus;
  const cores = results.environment?.machine?.cores ?? 'all the';
  const f = scarceFigures(results);
  const paired = Object.keys(f.usual.paired).length > 0 || Object.keys(f.scarce.paired).length > 0;
  const shareOf = (workload) => scarce.find((r) => r.workload === workload && r.rateShare !== undefined)?.rateShare;
  const shared = shareOf('w4') ?? shareOf('w4paired');
  // A merged page can hold W4 and W4 in paired rounds from runs made at different rates: each is named with its own.
  const pairedShare = shareOf('w4') === undefined ? undefined : shareOf('w4paired');
  const onScarce = cpus === 1 ? 'one core' : `${cpus} cores`;
  const measured = (share) => `the median of its rounds: ${fmt(share.scarceTasksPerSec)} and ${fmt(share.usualTasksPerSec)} tasks/s`;
  const pairedRates =
    pairedShare === undefined || pairedShare.missing || pairedShare.rate === shared?.rate
      ? ''
      : ` W4 in paired rounds ran at ${fmt(pairedShare.rate)} tasks/s on ${onScarce} and ${fmt(pairedShare.usualRate)} on ${cores} cores, the same share of that run's bare relay (${measured(pairedShare)}).`;
  const rates =
    shared === undefined || shared.missing
      ? `W4 runs at the same rate on both settings${shared?.missing ? " (the bare relay's throughput was not measured on both)" : ''}.`
      : `W4 and its relays run at ${fmt(shared.rate)} tasks/s on ${onScarce} and ${fmt(shared.usualRate)} on ${cores} cores: the same share (${fmt((100 * shared.usualRate) / shared.usualTasksPerSec)} %) of the bare relay's throughput on each, measured in the run (\`w4-ceiling.mjs --throughput\`, ${measured(shared)}).${pairedRates}`;
  const pinned = [...new Set(scarce.flatMap((r) => (r.pinned ?? []).map((p) => `${p.name} (${fmt(p.processes)} process${p.processes === 1 ? '' : 'es'})`)))];
  const rows = [];
  for (const store of Object.keys(STORE_NAMES)) {
    const cell = (side) => {
      const c = f[side].cpu[store];
      const r = ratio(c?.retryd, c?.bare);
      return c === undefined ? '–' : `${fmt(c.retryd, 3)} ÷ ${fmt(c.bare, 3)} ms = ${judged(r, (v) => v <= SCARCE_AIMS.cpuPerAttempt)}`;
    };
    if (f.usual.cpu[store] !== undefined || f.scarce.cpu[store] !== undefined) rows.push([`W1 ${STORE_NAMES[store]}: CPU per attempt ≤ ${SCARCE_AIMS.cpuPerAttempt}× the bare loop with the store's work`, cell('usual'), cell('scarce')]);
  }
  if (f.usual.sqliteVsPeer !== undefined || f.scarce.sqliteVsPeer !== undefined) {
    const met = (v) => v >= SCARCE_AIMS.w1SqliteVsBullmq;
    const cell = (side) => {
      const { sqliteVsPeer, sqliteBareVsPeer } = f[side];
      if (sqliteVsPeer === undefined) return '–';
      // The bare loop with SQLite's work is the ceiling of a durable dispatcher on SQLite: where it misses the aim
      // too, no build of retryd's design can meet it on this setting.
      const beyond = !met(sqliteVsPeer) && sqliteBareVsPeer !== undefined && !met(sqliteBareVsPeer) ? ', beyond the ceiling' : '';
      return `${judged(sqliteVsPeer, met)}${beyond}${sqliteBareVsPeer === undefined ? '' : `; the bare loop with SQLite's work ${times(sqliteBareVsPeer)}`}`;
    };
    rows.push([`W1 SQLite: ≥ ${SCARCE_AIMS.w1SqliteVsBullmq}× BullMQ attempts/s`, cell('usual'), cell('scarce')]);
  }
  for (const store of Object.keys(STORE_NAMES)) {
    const cell = (side) => {
      const l = f[side].lag[store];
      if (l === undefined) return '–';
      const met = (v) => v <= SCARCE_AIMS.w4LagVsRelay;
      const r = ratio(l.retryd, l.relay);
      // The relay that does only the store's work, read against the same aim: past it, no relay on that store meets it.
      const floor = ratio(l.storeRelay, l.relay);
      const beyond = r !== undefined && !met(r) && floor !== undefined && !met(floor) ? ', beyond the ceiling' : '';
      const withStore =
        l.storeRelay === undefined ? '' : `; the relay with the store's work ${fmt(l.storeRelay, 1)} ms (${times(floor)} the bare relay's; retryd ${times(ratio(l.retryd, l.storeRelay))} of it)`;
      return `${fmt(l.retryd, 1)} ÷ ${fmt(l.relay, 1)} ms = ${judged(r, met)}${beyond} (${fmt(l.rate)} tasks/s)${withStore}`;
    };
    if (f.usual.lag[store] !== undefined || f.scarce.lag[store] !== undefined) rows.push([`W4 ${STORE_NAMES[store]}: lag p99 ≤ ${SCARCE_AIMS.w4LagVsRelay}× the bare relay's`, cell('usual'), cell('scarce')]);
    if (f.usual.paired[store] !== undefined || f.scarce.paired[store] !== undefined) {
      rows.push([`W4 ${STORE_NAMES[store]}: lag p99 ≤ ${SCARCE_AIMS.w4LagVsRelay}× the bare relay's, paired rounds`, pairedCell(f.usual.paired[store]), pairedCell(f.scarce.paired[store])]);
    }
  }
  return [
    '## Scarce CPU',
    '',
    `W1, W4${paired ? ' (alone and in paired rounds)' : ''} and W4's bare relay again with every process of the step on ${cpus === 1 ? 'one core' : `${cpus} cores`} (\`--cpus ${cpus}\`): the script is started through \`taskset -c\`, so retryd, the downstream, the peers, a Redis the step starts and the load generator inherit the pinning; the machine's shared servers were pinned with \`taskset -a -pc\` for each such step and given their affinity back after it: ${pinned.length > 0 ? pinned.join(', ') : 'none found'}. ${rates} The aims are issue 45's. Beside W4's, where the run has it, the p99 of the bare relay with W4's work on the same store (\`w4-ceiling.mjs --store\`: its inserts, completions and server, none of retryd's own work): what the store's work alone costs the lag there, and where it is far above retryd's, a setting that store's work saturates. Where that relay misses the aim too, retryd's miss is marked beyond the ceiling: no relay on that store meets it.${paired ? " In paired rounds (`w4-paired.mjs`), retryd, the relay with the store's work and the bare relay run back to back in every round, in an order that rotates, and each round's ratios are taken within the round: the machine's drift between runs minutes apart, which moves one setting's single runs by as much as 2× on one core, hits all three alike. The median of the rounds' ratios is the figure the aim is judged on where the run has it." : ''}`,
    '',
    ['| Aim | Usual run (' + cores + ' cores) | ' + (cpus === 1 ? 'One core' : `${cpus} cores`) + ' |', '| --- | --- | --- |', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n'),
  ].join('\n');
}
