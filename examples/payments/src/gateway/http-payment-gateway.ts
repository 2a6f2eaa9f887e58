import type { ChargeCall, ChargeOutcome, ChargeRequest, KeySettlement, PaymentGateway } from './payment-gateway.js';

/** The mock gateway's wire format (see `mock-gateway/gateway-server.ts`); a real gateway gets an adapter of its own. */
interface ChargeAnswer {
  chargeId?: string;
  code?: string;
}

/**
 * {@link PaymentGateway} over the mock gateway's HTTP API: `POST /charges` with an `Idempotency-Key` header
 * (200 charged, 402 declined, 409 key closed, 5xx transient) and `POST /charges/{key}/close`.
 */
export class HttpPaymentGateway implements PaymentGateway {
  /** @param baseUrl - the gateway's origin, e.g. `http://127.0.0.1:9000` */
  constructor(private readonly baseUrl: string) {}

  chargeCall(request: ChargeRequest): ChargeCall {
    return {
      url: `${this.baseUrl}/charges`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': request.idempotencyKey },
      body: { paymentId: request.paymentId, amountCents: request.amountCents, card: request.card },
    };
  }

  async charge(request: ChargeRequest, signal: AbortSignal): Promise<ChargeOutcome> {
    const call = this.chargeCall(request);
    const response = await fetch(call.url, { method: call.method, headers: call.headers, body: JSON.stringify(call.body), signal });
    const answer = (await response.json().catch(() => ({}))) as ChargeAnswer;
    if (response.status === 200 && answer.chargeId !== undefined) {
      return { kind: 'charged', chargeId: answer.chargeId, replayed: response.headers.get('idempotent-replayed') === 'true' };
    }
    if (response.status === 402) return { kind: 'declined', code: answer.code ?? 'declined' };
    return { kind: 'failed', status: response.status, code: answer.code ?? `status_${response.status}` };
  }

  async closeKey(request: ChargeRequest, signal: AbortSignal): Promise<KeySettlement> {
    const response = await fetch(`${this.baseUrl}/charges/${encodeURIComponent(request.idempotencyKey)}/close`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ paymentId: request.paymentId }),
      signal,
    });
    if (response.status !== 200) throw new Error(`closing key ${request.idempotencyKey}: gateway answered ${response.status}`);
    return (await response.json()) as KeySettlement;
  }
}
