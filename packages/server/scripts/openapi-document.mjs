// The OpenAPI document exactly as `retryd serve` publishes it at /openapi.json: a service on an in-memory SQLite store,
// listening on a free loopback port for the one request. Needs the server built (dist/).
import { pino } from 'pino';
import { DEFAULT_CONFIG, startRetryd } from '../dist/index.js';

/** The document `GET /openapi.json` answers, parsed. */
export async function openapiDocument() {
  const service = await startRetryd({ ...DEFAULT_CONFIG, port: 0, store: 'sqlite::memory:', role: 'api' }, pino({ level: 'silent' }));
  try {
    const response = await fetch(`${service.url}/openapi.json`);
    if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
    return await response.json();
  } finally {
    await service.close();
  }
}
