import type { Scenario } from '../scenario.js';
import { WORKER_SCENARIOS } from './worker-faults.js';

/** Every chaos scenario, in the order of the results table. */
export const SCENARIOS: Scenario[] = [...WORKER_SCENARIOS];
