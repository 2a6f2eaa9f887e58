import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPaymentGateway } from '../src/gateway/http-payment-gateway.js';
import type { ChargeRequest } from '../src/gateway/payment-gateway.js';
import { chargeBehaviour, type Flakiness } from '../src/mock-gateway/flakiness.js';
import { GatewayLedger } from '../src/mock-gateway/gateway-ledger.js';
import { buildGatewayServer } from '../src/mock-gateway/gateway-server.js';

const dir = mkdtempSync(join(tmpdir(), 'retryd-gateway-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A gateway on loopback whose every roll is the next of `rolls` (then the last, repeated). */
async function startGateway(rolls: number[], ledgerFile = join(dir, `${rolls.join('-')}-${Math.random()}.db`)) {
  const ledger = new GatewayLedger(ledgerFile);
  let i = 0;
  const app = buildGatewayServer({ ledger, random: () => rolls[Math.min(i++, rolls.length - 1)] as number, holdMs: 2_000 });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, ledger, url, gateway: new HttpPaymentGateway(url) };
}

const charge = (key: string, card = '4000000000004242'): ChargeRequest => ({ paymentId: `p-${key}`, amountCents: 1_250, card, idempotencyKey: key });
const signal = () => AbortSignal.timeout(5_000);

describe('the mock gateway', () => {
  let running: Awaited<ReturnType<typeof startGateway>>;
  let app: FastifyInstance;
  beforeAll(async () => {
    running = await startGateway([0.9]);
    app = running.app;
  });
  afterAll(async () => {
    await app.close();
    running.ledger.close();
  });

  it('charges a key once and answers a duplicate with the original charge', async () => {
    const first = await running.gateway.charge(charge('k1'), signal());
    const second = await running.gateway.charge(charge('k1'), signal());
    expect(first).toMatchObject({ kind: 'charged', replayed: false });
    expect(second).toEqual({ ...first, replayed: true });
    const entries = running.ledger.entries().filter((e) => e.idempotencyKey === 'k1');
    expect(entries).toEqual([expect.objectContaining({ outcome: 'charged', replays: 1, amountCents: 1_250 })]);
  });

  it('refuses the same key for another amount (422), and keeps the first charge', async () => {
    await running.gateway.charge(charge('k2'), signal());
    const response = await fetch(`${running.url}/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k2' },
      body: JSON.stringify({ paymentId: 'p-k2', amountCents: 9_999, card: '4000000000004242' }),
    });
    expect(response.status).toBe(422);
    expect(running.ledger.entries().filter((e) => e.idempotencyKey === 'k2')).toHaveLength(1);
  });

  it('declines a card ending in 0002 on every request, recorded once', async () => {
    expect(await running.gateway.charge(charge('k3', '4000000000000002'), signal())).toEqual({ kind: 'declined', code: 'card_declined' });
    expect(await running.gateway.charge(charge('k3', '4000000000000002'), signal())).toEqual({ kind: 'declined', code: 'card_declined' });
    expect(running.ledger.entries().filter((e) => e.idempotencyKey === 'k3')).toEqual([expect.objectContaining({ outcome: 'declined', replays: 1 })]);
  });

  it('closes a key: a charged key says so, a fresh one is never charged afterwards', async () => {
    const charged = await running.gateway.charge(charge('k4'), signal());
    expect(await running.gateway.closeKey(charge('k4'), signal())).toEqual({ state: 'charged', chargeId: (charged as { chargeId: string }).chargeId });
    expect(await running.gateway.closeKey(charge('k5'), signal())).toEqual({ state: 'closed' });
    expect(await running.gateway.charge(charge('k5'), signal())).toEqual({ kind: 'failed', status: 409, code: 'key_closed' });
  });

  it('names the field and the rule of a bad charge', async () => {
    const response = await fetch(`${running.url}/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k6' },
      body: JSON.stringify({ paymentId: 'p', amountCents: 0, card: '4242' }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(/amountCents must be >= 1/);
  });
});

describe('its faults', () => {
  it('applies a charge whose answer it drops, so only the key stops a second charge', async () => {
    // Roll 0.17 loses the answer (after timeout 0.05 and unavailable 0.1), then 0.9 answers normally.
    const { app, ledger, gateway } = await startGateway([0.17, 0.9]);
    try {
      await expect(gateway.charge(charge('lost'), signal())).rejects.toThrow();
      expect(ledger.entries()).toEqual([expect.objectContaining({ idempotencyKey: 'lost', outcome: 'charged', replays: 0 })]);
      expect(await gateway.charge(charge('lost'), signal())).toMatchObject({ kind: 'charged', replayed: true });
      expect(ledger.entries().filter((e) => e.outcome === 'charged')).toHaveLength(1);
    } finally {
      await app.close();
      ledger.close();
    }
  });

  it('answers 503 without charging, and keeps its ledger across a restart', async () => {
    const file = join(dir, 'restart.db');
    const run = async <T>(rolls: number[], use: (g: HttpPaymentGateway, l: GatewayLedger) => Promise<T>): Promise<T> => {
      const started = await startGateway(rolls, file);
      try {
        return await use(started.gateway, started.ledger);
      } finally {
        await started.app.close();
        started.ledger.close();
      }
    };
    await run([0.06], async (g, l) => {
      expect(await g.charge(charge('r1'), signal())).toEqual({ kind: 'failed', status: 503, code: 'unavailable' });
      expect(l.entries()).toEqual([]);
    });
    const charged = await run([0.9], (g) => g.charge(charge('r1'), signal()));
    expect(charged).toMatchObject({ kind: 'charged', replayed: false });
    expect(await run([0.9], (g) => g.charge(charge('r1'), signal()))).toEqual({ ...charged, replayed: true });
  });

  it('picks a behaviour from the card and the roll', () => {
    const f: Flakiness = { timeout: 0.1, unavailable: 0.1, loseResponse: 0.1 };
    expect(chargeBehaviour('4000000000004242', 0.05, f)).toBe('timeout');
    expect(chargeBehaviour('4000000000004242', 0.15, f)).toBe('unavailable');
    expect(chargeBehaviour('4000000000004242', 0.25, f)).toBe('lose_response');
    expect(chargeBehaviour('4000000000004242', 0.5, f)).toBe('charge');
    expect(chargeBehaviour('4000000000000002', 0.5, f)).toBe('decline');
    expect(chargeBehaviour('4000000000000005', 0.5, f)).toBe('issuer_down');
  });
});
