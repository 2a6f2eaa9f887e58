import { parseArgs } from 'node:util';
import { formatAudit } from './ledger-audit.js';
import { runDemo } from './run-demo.js';

// `node examples/payments/run.mjs --payments 10000 --worker-crashes 5 --service-crashes 5 --postgres-crashes 1 --seed 1`:
// the whole demo; exits 1 when the audit finds a violation.

const { values } = parseArgs({
  options: {
    payments: { type: 'string', default: '10000' },
    'worker-crashes': { type: 'string', default: '5' },
    'service-crashes': { type: 'string', default: '5' },
    'postgres-crashes': { type: 'string', default: '1' },
    seed: { type: 'string', default: '1' },
  },
});

function count(name: keyof typeof values, min: number): number {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < min) {
    console.error(`--${name} must be an integer >= ${min}, got ${values[name]}`);
    process.exit(2);
  }
  return value;
}

const options = {
  payments: count('payments', 1),
  workerCrashes: count('worker-crashes', 0),
  serviceCrashes: count('service-crashes', 0),
  postgresCrashes: count('postgres-crashes', 0),
  seed: count('seed', 0),
};
const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
log(
  `${options.payments} payments, ${options.workerCrashes} worker crashes, ${options.serviceCrashes} retryd crashes, ` +
    `${options.postgresCrashes} PostgreSQL crashes, seed ${options.seed}`,
);
const result = await runDemo({ ...options, log });
console.log('');
console.log(
  `took ${(result.elapsedMs / 1000).toFixed(1)} s; killed the worker ${result.workerCrashes} times, retryd ${result.serviceCrashes} times ` +
    `and PostgreSQL ${result.postgresCrashes} time${result.postgresCrashes === 1 ? '' : 's'}` +
    (result.unexpectedExits === 0 ? '' : `; ${result.unexpectedExits} exit(s) of a process on its own, each restarted (logged above)`),
);
for (const line of formatAudit(result.report)) console.log(line);
process.exitCode = result.report.ok ? 0 : 1;
