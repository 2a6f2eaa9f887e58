// The test-only entry of `retryd serve`: `node --import <dist>/service/test-faults-entry.js <dist>/cli/main.js serve …`
// reads the chaos suite's switches (RETRYD_FAULT_PAUSE_AT, RETRYD_CLOCK_OFFSET_MS) and installs them before the CLI
// starts the service. The published package leaves this file and test-faults.ts out (`files` in package.json), so
// the switches exist only in a checkout's build.
import { installServiceTestHooks } from './test-hooks.js';
import { clockFromEnv, faultHookFromEnv } from './test-faults.js';

const clock = clockFromEnv(process.env);
const faultHook = faultHookFromEnv(process.env);
installServiceTestHooks({ ...(clock === undefined ? {} : { clock }), ...(faultHook === undefined ? {} : { faultHook }) });
