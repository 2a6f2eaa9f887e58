import type { Scenario } from '../scenario.js';
import { CLOCK_AND_DOWNSTREAM_SCENARIOS } from './clock-and-downstreams.js';
import { GRPC_SCENARIOS } from './grpc-target.js';
import { STORE_SCENARIOS } from './store-faults.js';
import { WORKER_SCENARIOS } from './worker-faults.js';

/** Every chaos scenario, in the order of the results table. `RETRYD_CHAOS_ONLY=id,id` runs only those. */
export const SCENARIOS: Scenario[] = [...WORKER_SCENARIOS, ...STORE_SCENARIOS, ...CLOCK_AND_DOWNSTREAM_SCENARIOS, ...GRPC_SCENARIOS].filter(
  (scenario) => !process.env['RETRYD_CHAOS_ONLY'] || process.env['RETRYD_CHAOS_ONLY'].split(',').includes(scenario.id),
);
