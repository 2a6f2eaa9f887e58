import type { FastifyInstance } from 'fastify';
import { ConfigError, type RetrydConfig } from './retryd-config.js';

// Where `retryd serve` listens: the API's port and the metrics port, each refused in one line naming its flag when it
// cannot be had (a port taken is the operator's to fix, not a crash to log with a stack).

/** `http://host:port`, an IPv6 host in brackets. */
export function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The port a listening app is on (the one picked for 0). */
export function portOf(app: FastifyInstance, configured: number): number {
  const address = app.server.address();
  return typeof address === 'object' && address !== null ? address.port : configured;
}

/**
 * `--metrics-port` against the API's port: the two servers cannot share one.
 *
 * @throws ConfigError naming both flags
 */
export function checkMetricsPort(config: RetrydConfig, runsApi: boolean): void {
  if (config.metricsPort === undefined || !runsApi || config.metricsPort === 0 || config.metricsPort !== config.port) return;
  throw new ConfigError(`--metrics-port must differ from --port (${config.port}), got ${config.metricsPort}: the API and the metrics each need a port of their own`);
}

/** Why a port cannot be listened on, for the operator, by the error's code; undefined for an error that is not theirs to fix. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'is taken by another process',
  EACCES: 'may not be opened by this user (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'is on an address this machine does not have',
};

/**
 * Listens `app` on `host`:`port`, turning a port that cannot be had into one line naming `flag`.
 *
 * @throws ConfigError when the port is taken, privileged or on an address the machine does not have
 */
export async function listenOn(app: FastifyInstance, flag: string, port: number, host: string): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = typeof code === 'string' ? LISTEN_FAILURES[code] : undefined;
    if (why === undefined) throw error;
    throw new ConfigError(`${flag} ${port}: ${urlOf(host, port).slice('http://'.length)} ${why} (${code as string}); choose another port`, { cause: error });
  }
}
