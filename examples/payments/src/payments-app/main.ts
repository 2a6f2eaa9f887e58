import { startPaymentWorker } from './payment-worker.js';

// The payment worker as a process. Environment: DATABASE_URL (its PostgreSQL), RETRYD_SCHEMA (retryd's schema there,
// default retryd), RETRYD_URL, GATEWAY_URL, PAYMENTS_PORT (default 0: a free one), CALLBACK_URL (where retryd calls it
// back), CALLBACK_SECRET (the whsec_ secret retryd signs callbacks with), RETRYD_ALLOW_TARGETS (as the service's
// --allow-targets). Prints {"event":"listening","url":…} once it listens. It may be SIGKILLed at any moment: everything
// it needs to carry on is in its database.

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`${name} must be set`);
    process.exit(2);
  }
  return value;
}

const worker = await startPaymentWorker({
  databaseUrl: required('DATABASE_URL'),
  retrydSchema: process.env.RETRYD_SCHEMA ?? 'retryd',
  retrydUrl: required('RETRYD_URL'),
  gatewayUrl: required('GATEWAY_URL'),
  port: Number(process.env.PAYMENTS_PORT ?? 0),
  callbackUrl: required('CALLBACK_URL'),
  callbackSecret: required('CALLBACK_SECRET'),
  onError: (error) => console.error(JSON.stringify({ event: 'error', error: String(error) })),
});
console.log(JSON.stringify({ event: 'listening', url: worker.url }));

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void worker.close().finally(() => process.exit(0));
  });
}
