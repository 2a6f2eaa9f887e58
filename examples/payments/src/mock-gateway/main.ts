import { seededRandom } from '@retryd/core/testing';
import { GatewayLedger } from './gateway-ledger.js';
import { buildGatewayServer } from './gateway-server.js';
import { assertValidFlakiness, DEFAULT_FLAKINESS, type Flakiness } from './flakiness.js';

// The mock gateway as a process: GATEWAY_LEDGER (the ledger file), GATEWAY_PORT (default 0: a free one),
// GATEWAY_SEED (its flakiness rolls), GATEWAY_TIMEOUT / GATEWAY_LOSE_RESPONSE / GATEWAY_UNAVAILABLE (shares).
// Prints one JSON line {"event":"listening","url":…} once it listens.

const env = process.env;
const ledgerPath = env.GATEWAY_LEDGER;
if (ledgerPath === undefined || ledgerPath === '') {
  console.error('GATEWAY_LEDGER must name the ledger file');
  process.exit(2);
}
const share = (name: string, fallback: number): number => (env[name] === undefined ? fallback : Number(env[name]));
const flakiness: Flakiness = {
  timeout: share('GATEWAY_TIMEOUT', DEFAULT_FLAKINESS.timeout),
  loseResponse: share('GATEWAY_LOSE_RESPONSE', DEFAULT_FLAKINESS.loseResponse),
  unavailable: share('GATEWAY_UNAVAILABLE', DEFAULT_FLAKINESS.unavailable),
};
assertValidFlakiness(flakiness);

const ledger = new GatewayLedger(ledgerPath);
const app = buildGatewayServer({ ledger, random: seededRandom(Number(env.GATEWAY_SEED ?? 1)), flakiness });
const url = await app.listen({ host: '127.0.0.1', port: Number(env.GATEWAY_PORT ?? 0) });
console.log(JSON.stringify({ event: 'listening', url }));

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void app.close().finally(() => {
      ledger.close();
      process.exit(0);
    });
  });
}
