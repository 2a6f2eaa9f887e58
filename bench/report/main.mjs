// `npm run bench`: the benchmark report in one command. Runs W1–W5, W7 and W8 on each store with the peers side by
// side (W1 with the default protections, its headline, and with them off, and on Redis also on a Redis of its own with
// AOF `everysec`, as deployed, its Redis headline; W1 over gRPC, retryd alone, beside it; W7 each case with the defaults and off), W6 through the
// transactional enqueue beside pg-boss's `insert` on PostgreSQL, then the space a task takes and the machine's
// ceilings (each store's insert alone, W4's load through a bare relay and through one with each store's work),
// saves the results, and renders docs/benchmarks.md, its charts (docs/bench/*.svg) and the README's headline from them.
//
//   npm run bench [-- --quick] [--stores sqlite,postgres,redis] [--peers bullmq,pgboss|none]
//                 [--workloads w1,w1grpc,w2,w3,w4,w4paired,w5,w6tx,w7,w8,space,ceilings] [--baseline PATH/dist/cli/main.js]
//                 [--from RESULTS.json] [--merge RESULTS.json] [--out RESULTS.json] [--doc FILE] [--charts DIR]
//                 [--readme FILE|none] [--note TEXT] [--cpus N] [--quiet]
//   npm run bench -- probe [<name> [args]]   the scripts of bench/service/ the report does not run (./probes.mjs):
//                                            a list, one line each, without a name; `<name> --help`: its usage
//   npm run bench -- --help                  this text
//
// Full run (the default): the sizes of WORKLOADS.md, ~40 min on a quiet 2-core machine (the plan and its estimate are
// printed first); results to bench/results/<date>.json, the page to docs/benchmarks.md, charts to docs/bench/, the
// headline into README.md between <!-- bench:headline --> and <!-- /bench:headline -->.
// --quick: smoke sizes and one round (about 3 min for everything on a busy machine); results to
// bench/results/quick-<date>.json, the page and charts to bench/results/quick/, README untouched: its figures mean
// nothing and never land in docs/.
// --from FILE: no run; renders the page again from a saved results file (quick or full, as the file says).
// A page without the report's mark (written by hand) is appended to benchmarks-history.md beside it before it is replaced.
// --merge FILE: the run measures only --workloads on --stores and takes every other step over from FILE (the other
// workloads', and these workloads' on other stores), an earlier results file of the same size (quick or full), so
// that the page keeps every figure; each such step, and the page's opening, names the run it came from (e.g.
// `--workloads w1,w7 --merge bench/results/<date>.json`).
// --note TEXT: a remark kept with the results and shown at the top of the page (e.g. what else ran on the machine).
// --baseline PATH: another build of retryd (its dist/cli/main.js, e.g. a worktree of an older commit, built) runs
// beside this one in W1 and W4, in every round; the page gains a section with after ÷ before per store, naming the
// baseline's commit (read from its checkout with git).
// --cpus N: W1 and W4, alone and in paired rounds (and W4's bare relay, which their lag is read against) run again
// after the usual steps with every process of the step pinned to N cores (`taskset -c`; the shared PostgreSQL and
// Redis too, for the step only); the page gains a section with issue 45's aims on both settings (e.g. `--workloads
// w1,w4 --cpus 1`). W4 and its relays run there at the same share of the bare relay's throughput as on the usual
// cores, both measured in the run.
// Exits 1 when a run failed a check (its figures are still saved and shown, marked). Build the service first: npm run build

import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { machine } from '../service/lib/report.mjs';
import { renderCharts } from './charts.mjs';
import { ROOT, collectEnvironment } from './environment.mjs';
import { PEERS, STORES, WORKLOADS, parseList, planRuns } from './plan.mjs';
import { takeOver } from './merge-results.mjs';
import { runProbe, usageHeader } from './probes.mjs';
import { archiveSection, fillReadme, renderDoc } from './render-doc.mjs';
import { runStep } from './run-workloads.mjs';
import { atShareOfThroughput, parseCpus, planScarce } from './scarce.mjs';

// `probe` is a front of its own: the report's options do not apply to it.
if (process.argv[2] === 'probe') process.exit(await runProbe(process.argv.slice(3)));
if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  console.log(usageHeader(import.meta.filename));
  process.exit(0);
}

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    stores: { type: 'string', default: STORES.join(',') },
    peers: { type: 'string', default: PEERS.join(',') },
    workloads: { type: 'string', default: WORKLOADS.join(',') },
    from: { type: 'string' },
    merge: { type: 'string' },
    out: { type: 'string' },
    doc: { type: 'string' },
    charts: { type: 'string' },
    readme: { type: 'string' },
    note: { type: 'string' },
    baseline: { type: 'string' },
    cpus: { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
});
const say = (line) => {
  if (!args.quiet) console.log(line);
};
/** Paths as the page names them: relative to the repository, with forward slashes. */
const repoPath = (p) => relative(ROOT, resolve(p)).split('\\').join('/');

/** Writes the results file (after every step: an interrupted run keeps what it measured, for --from). */
function save(results, file) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}

/** Runs the plan, saving the results as they come; returns them with the file they are in. */
async function measure() {
  const stores = parseList('stores', args.stores, STORES);
  if (stores.length === 0) throw new Error('--stores must name at least one store');
  const peers = parseList('peers', args.peers, PEERS);
  const workloads = parseList('workloads', args.workloads, WORKLOADS);
  const baseline = args.baseline === undefined ? undefined : baselineOf(args.baseline);
  const cpus = parseCpus(args.cpus);
  const usual = planRuns({ quick: args.quick, stores, peers, workloads, baseline: baseline?.cli });
  const steps = cpus === undefined ? usual : planScarce(usual, { cpus });
  const minutes = steps.reduce((n, s) => n + s.minutes, 0);
  say(`plan (${args.quick ? 'quick' : 'full'}): ${steps.map((s) => `${s.script ?? s.workload} ${s.store}${s.cpus === undefined ? '' : ` on ${s.cpus} core${s.cpus === 1 ? '' : 's'}`}`).join('; ')}; about ${Math.ceil(minutes)} min on a quiet machine`);
  // --merge: the other workloads' steps of an earlier run, kept from the start (an interrupted run keeps them too).
  const kept = args.merge === undefined ? undefined : takeOver(JSON.parse(readFileSync(args.merge, 'utf8')), repoPath(args.merge), { quick: args.quick, workloads, stores, baseline });
  /** @type {Record<string, any>} What the results file holds (format 1; render-doc.mjs reads it). */
  const results = {
    format: 1,
    quick: args.quick,
    ...(args.note === undefined ? {} : { note: args.note }),
    ...(cpus === undefined ? {} : { cpus }),
    ...((kept?.baseline ?? baseline) === undefined ? {} : { baseline: kept?.baseline ?? baseline }),
    startedAt: new Date().toISOString(),
    stores: kept?.stores ?? stores,
    peers,
    workloads: kept?.workloads ?? workloads,
    ...(kept === undefined ? {} : { merged: kept.merged }),
    environment: await collectEnvironment(),
    runs: kept?.runs ?? [],
  };
  const file = resolve(outPath(results));
  const logFile = `${file}.log`;
  save(results, file);
  writeFileSync(logFile, '');
  for (const planned of steps) {
    // A scarce W4 step's rate comes from the throughputs measured just before it.
    const step = atShareOfThroughput(planned, results.runs);
    const run = await runStep(step, { quiet: args.quiet, logFile });
    results.runs.push(step.rateShare === undefined ? run : { ...run, rateShare: step.rateShare });
    save(results, file);
  }
  results.finishedAt = new Date().toISOString();
  results.loadAfter = machine().load;
  save(results, file);
  say(`\nlog of the scripts: ${repoPath(logFile)}\nresults: ${repoPath(file)}`);
  return { results, file };
}

/** `--baseline`: the CLI's absolute path and the commit of the checkout it was built in (`git rev-parse`). */
function baselineOf(path) {
  const cli = resolve(path);
  if (!existsSync(cli)) throw new Error(`--baseline: no such file ${cli} (build that checkout first: npm run build)`);
  let commit;
  try {
    commit = execFileSync('git', ['-C', dirname(cli), 'rev-parse', '--short=7', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    commit = undefined; // not in a git checkout: the page names the path alone
  }
  return { cli, ...(commit === undefined ? {} : { commit }) };
}

function outPath(results) {
  if (args.out !== undefined) return args.out;
  const date = results.startedAt.slice(0, 10);
  return join(ROOT, 'bench', 'results', `${results.quick ? 'quick-' : ''}${date}.json`);
}

let results;
let resultsFile;
if (args.from !== undefined) {
  if (args.merge !== undefined) throw new Error('--merge goes with a run, not with --from (a results file of a merged run has every step already)');
  resultsFile = resolve(args.from);
  results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  if (results.format !== 1) throw new Error(`--from: ${args.from} is not a results file of npm run bench (format 1)`);
} else {
  ({ results, file: resultsFile } = await measure());
}

// A quick run's page never lands in docs/, nor its headline in the README, unless asked for by name.
const quickDir = join(ROOT, 'bench', 'results', 'quick');
const docFile = resolve(args.doc ?? (results.quick ? join(quickDir, 'benchmarks.md') : join(ROOT, 'docs', 'benchmarks.md')));
const chartsDir = resolve(args.charts ?? (results.quick ? quickDir : join(ROOT, 'docs', 'bench')));
const readmeFile = args.readme === 'none' ? undefined : args.readme !== undefined ? resolve(args.readme) : results.quick ? undefined : join(ROOT, 'README.md');

mkdirSync(chartsDir, { recursive: true });
mkdirSync(dirname(docFile), { recursive: true });
const charts = renderCharts(results);
for (const [name, svg] of Object.entries(charts)) writeFileSync(join(chartsDir, name), svg);
// A page written by hand is not lost: it goes to benchmarks-history.md beside it first.
const archived = existsSync(docFile) ? archiveSection(readFileSync(docFile, 'utf8'), { date: results.startedAt.slice(0, 10) }) : undefined;
if (archived !== undefined) {
  const historyFile = join(dirname(docFile), 'benchmarks-history.md');
  appendFileSync(historyFile, archived);
  say(`the hand-written ${repoPath(docFile)} is kept at the end of ${repoPath(historyFile)}`);
}
const fromDoc = (p) => relative(dirname(docFile), p).split('\\').join('/');
writeFileSync(docFile, renderDoc(results, { chartPath: (name) => fromDoc(join(chartsDir, name)), resultsPath: fromDoc(resultsFile), resultsCommandPath: repoPath(resultsFile) }));
say(`page: ${repoPath(docFile)}; charts: ${Object.keys(charts).map((n) => repoPath(join(chartsDir, n))).join(', ')}`);
if (readmeFile !== undefined) {
  writeFileSync(readmeFile, fillReadme(readFileSync(readmeFile, 'utf8'), results, { reportPath: relative(dirname(readmeFile), docFile).split('\\').join('/') }));
  say(`headline: ${repoPath(readmeFile)}`);
}
// A measured run that failed a check exits 1; a page rendered again from a file shows the failures and succeeds.
process.exit(args.from !== undefined || results.runs.every((r) => r.from !== undefined || r.error === undefined) ? 0 : 1);
