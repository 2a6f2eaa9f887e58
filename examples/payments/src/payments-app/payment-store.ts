import pg from 'pg';
import type { PaymentRequest } from '../payment/payment-request.js';
import { movePayment } from '../payment/payment-transitions.js';
import { PaymentEvent, PaymentStatus } from '../payment/payment-status.js';

/** A payment as the app keeps it. */
export interface Payment {
  paymentId: string;
  amountCents: number;
  /** The card number (a real app keeps the gateway's card token instead). */
  card: string;
  /** Journaled with the payment, before anything is sent: every send of this payment carries it. */
  idempotencyKey: string;
  status: PaymentStatus;
  /** Why a DEAD payment is dead (`declined: card_declined`, `exhausted: max_attempts` …); null otherwise. */
  reason: string | null;
  chargeId: string | null;
  /** The retryd task retrying the charge, once handed off (committed with the move to BACKOFF). */
  retryTaskId: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Fields a move may set beside the status. */
export type PaymentPatch = Partial<Pick<Payment, 'reason' | 'chargeId' | 'retryTaskId'>>;

/** What {@link PaymentStore.accept} did. */
export type AcceptResult = { kind: 'created' | 'existing'; payment: Payment } | { kind: 'conflict'; payment: Payment };

/** Writes the retryd task of a hand-off on the hand-off's own connection, inside its transaction. */
export type EnqueueInTransaction = (client: pg.PoolClient, payment: Payment) => Promise<{ taskId: string }>;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const schemaSql = (s: string): string => `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.payments (
  payment_id text PRIMARY KEY,
  amount_cents integer NOT NULL,
  card text NOT NULL,
  idempotency_key text NOT NULL UNIQUE,
  status text NOT NULL,
  reason text,
  charge_id text,
  retry_task_id text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_by_status ON ${s}.payments (status, updated_at);
CREATE TABLE IF NOT EXISTS ${s}.payment_moves (
  seq bigserial PRIMARY KEY,
  payment_id text NOT NULL,
  from_status text NOT NULL,
  event text NOT NULL,
  to_status text NOT NULL,
  at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS payment_moves_by_payment ON ${s}.payment_moves (payment_id, seq);
`;

interface PaymentRow {
  payment_id: string;
  amount_cents: number;
  card: string;
  idempotency_key: string;
  status: PaymentStatus;
  reason: string | null;
  charge_id: string | null;
  retry_task_id: string | null;
  /** bigint: pg hands it over as a string. */
  created_at: string;
  updated_at: string;
}

function toPayment(row: PaymentRow): Payment {
  return {
    paymentId: row.payment_id,
    amountCents: row.amount_cents,
    card: row.card,
    idempotencyKey: row.idempotency_key,
    status: row.status,
    reason: row.reason,
    chargeId: row.charge_id,
    retryTaskId: row.retry_task_id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Options of {@link PaymentStore.open}. */
export interface PaymentStoreOptions {
  /** The app's schema, created if missing. Default `payments`. */
  schema?: string;
  /** Connections in the pool. Default 16. */
  poolSize?: number;
  /** Told of an idle connection that broke (the server restarted): the pool drops it and connects again when needed. */
  onError?: (error: unknown) => void;
}

/**
 * The payments app's durable store, on PostgreSQL: the payments, each with its idempotency key (the journal: committed
 * before the first send, so a worker that crashes mid-flight finds the payment SENDING and its key on restart), and
 * every move of the state machine in `payment_moves`. Each write is one transaction, acknowledged once committed.
 *
 * The hand-off to retryd ({@link handOff}) is one transaction with retryd's task: retryd's schema lives in the same
 * database, and `@retryd/server/pg` writes the task on the hand-off's own connection. A payment is BACKOFF exactly
 * when its task exists.
 */
export class PaymentStore {
  private readonly table: string;
  private readonly moves: string;

  private constructor(
    private readonly pool: pg.Pool,
    schema: string,
  ) {
    this.table = `${schema}.payments`;
    this.moves = `${schema}.payment_moves`;
  }

  /**
   * Connects to `connectionString` and creates the schema and its tables if missing.
   *
   * @throws TypeError when `schema` is not a plain lower-case identifier
   */
  static async open(connectionString: string, options: PaymentStoreOptions = {}): Promise<PaymentStore> {
    const schema = options.schema ?? 'payments';
    if (!SCHEMA_NAME.test(schema)) throw new TypeError(`schema must be 1 to 63 of a-z 0-9 _, not starting with a digit; got ${JSON.stringify(schema)}`);
    // A connection that cannot be made in 5 s fails the step rather than hanging it: the server is down, and the
    // step's caller (a client's retried submit, retryd's retried callback, the sweeper) comes back later.
    const pool = new pg.Pool({ connectionString, max: options.poolSize ?? 16, connectionTimeoutMillis: 5_000 });
    pool.on('error', (error) => options.onError?.(error));
    try {
      await pool.query(schemaSql(schema));
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PaymentStore(pool, schema);
  }

  /**
   * Journals a payment as PENDING with `idempotencyKey`, once: the same request again is `existing` (a client
   * retrying its submit), another amount or card under the same id a `conflict`.
   */
  async accept(request: PaymentRequest, idempotencyKey: string, now: number): Promise<AcceptResult> {
    const inserted = await this.pool.query<PaymentRow>(
      `INSERT INTO ${this.table} (payment_id, amount_cents, card, idempotency_key, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'PENDING', $5, $5) ON CONFLICT (payment_id) DO NOTHING RETURNING *`,
      [request.paymentId, request.amountCents, request.card, idempotencyKey, now],
    );
    const created = inserted.rows[0];
    if (created !== undefined) return { kind: 'created', payment: toPayment(created) };
    const payment = await this.get(request.paymentId);
    if (payment === undefined) throw new Error(`payment ${request.paymentId} neither inserted nor found`);
    const same = payment.amountCents === request.amountCents && payment.card === request.card;
    return { kind: same ? 'existing' : 'conflict', payment };
  }

  /** The payment, or undefined. */
  async get(paymentId: string): Promise<Payment | undefined> {
    const { rows } = await this.pool.query<PaymentRow>(`SELECT * FROM ${this.table} WHERE payment_id = $1`, [paymentId]);
    return rows[0] === undefined ? undefined : toPayment(rows[0]);
  }

  /** The payment whose idempotency key is `idempotencyKey` (the key of its retryd task), or undefined. */
  async byIdempotencyKey(idempotencyKey: string): Promise<Payment | undefined> {
    const { rows } = await this.pool.query<PaymentRow>(`SELECT * FROM ${this.table} WHERE idempotency_key = $1`, [idempotencyKey]);
    return rows[0] === undefined ? undefined : toPayment(rows[0]);
  }

  /**
   * Applies `events` in turn to the payment (each checked by the state machine) and `patch`, in one transaction.
   *
   * @throws IllegalPaymentMoveError when a move is not in the lifecycle; nothing is written then
   */
  move(paymentId: string, events: readonly PaymentEvent[], patch: PaymentPatch, now: number): Promise<Payment> {
    return this.transaction(async (client) => {
      const payment = await this.locked(client, paymentId);
      if (payment === undefined) throw new Error(`no payment ${paymentId}`);
      return this.apply(client, payment, events, patch, now);
    });
  }

  /**
   * Hands a SENDING payment to retryd in one transaction: locks the payment, has `enqueue` write its retryd task on the
   * same connection, and moves it to BACKOFF with the task's id. Both commit, or neither does: a crash or an error
   * anywhere before the commit leaves the payment SENDING and no task, and the next hand-off starts again.
   *
   * @returns the payment in BACKOFF, or undefined when it was not SENDING (nothing written)
   */
  handOff(paymentId: string, enqueue: EnqueueInTransaction, now: number): Promise<Payment | undefined> {
    return this.transaction(async (client) => {
      const payment = await this.locked(client, paymentId);
      if (payment?.status !== PaymentStatus.SENDING) return undefined;
      // The task last, just before the commit: from the enqueue on, the transaction holds retryd's row of the gateway's
      // queue, which other hand-offs (and retryd's own writes to that target) wait for.
      const { taskId } = await enqueue(client, payment);
      return this.apply(client, payment, [PaymentEvent.BACK_OFF], { retryTaskId: taskId }, now);
    });
  }

  /** Every payment in one of `statuses` (last moved before `updatedBefore`, when given), oldest first. */
  async withStatus(statuses: readonly PaymentStatus[], updatedBefore?: number): Promise<Payment[]> {
    const { rows } = await this.pool.query<PaymentRow>(
      `SELECT * FROM ${this.table} WHERE status = ANY($1::text[]) AND ($2::bigint IS NULL OR updated_at < $2)
       ORDER BY created_at, payment_id`,
      [statuses, updatedBefore ?? null],
    );
    return rows.map(toPayment);
  }

  /** The moves of a payment, in order: `[from, event, to]`. */
  async movesOf(paymentId: string): Promise<[PaymentStatus, PaymentEvent, PaymentStatus][]> {
    const { rows } = await this.pool.query<{ from_status: PaymentStatus; event: PaymentEvent; to_status: PaymentStatus }>(
      `SELECT from_status, event, to_status FROM ${this.moves} WHERE payment_id = $1 ORDER BY seq`,
      [paymentId],
    );
    return rows.map((r) => [r.from_status, r.event, r.to_status]);
  }

  /** How many payments are in each status. */
  async counts(): Promise<Partial<Record<PaymentStatus, number>>> {
    const { rows } = await this.pool.query<{ status: PaymentStatus; n: string }>(`SELECT status, COUNT(*) AS n FROM ${this.table} GROUP BY status`);
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  /** Every payment: what the audit reads. */
  async all(): Promise<Payment[]> {
    const { rows } = await this.pool.query<PaymentRow>(`SELECT * FROM ${this.table} ORDER BY created_at, payment_id`);
    return rows.map(toPayment);
  }

  /** Closes the pool. */
  async close(): Promise<void> {
    await this.pool.end();
  }

  private async locked(client: pg.PoolClient, paymentId: string): Promise<Payment | undefined> {
    const { rows } = await client.query<PaymentRow>(`SELECT * FROM ${this.table} WHERE payment_id = $1 FOR UPDATE`, [paymentId]);
    return rows[0] === undefined ? undefined : toPayment(rows[0]);
  }

  /** The moves and the patch as one statement (the log rows and the payment's row), on a payment locked by `client`. */
  private async apply(client: pg.PoolClient, payment: Payment, events: readonly PaymentEvent[], patch: PaymentPatch, now: number): Promise<Payment> {
    const from: PaymentStatus[] = [];
    const to: PaymentStatus[] = [];
    let status = payment.status;
    for (const event of events) {
      const next = movePayment(status, event);
      from.push(status);
      to.push(next);
      status = next;
    }
    const { rows } = await client.query<PaymentRow>(
      `WITH logged AS (
         INSERT INTO ${this.moves} (payment_id, from_status, event, to_status, at)
         SELECT $1, f, e, t, $9 FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS m(f, e, t, n) ORDER BY n
       )
       UPDATE ${this.table} SET status = $5, reason = COALESCE($6, reason), charge_id = COALESCE($7, charge_id),
         retry_task_id = COALESCE($8, retry_task_id), updated_at = $9
       WHERE payment_id = $1 RETURNING *`,
      [payment.paymentId, from, events, to, status, patch.reason ?? null, patch.chargeId ?? null, patch.retryTaskId ?? null, now],
    );
    return toPayment(rows[0] as PaymentRow);
  }

  /** Runs `work` in a transaction on a connection of its own; a connection that broke is dropped, not reused. */
  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // A connection that dies while checked out (the server killed) emits 'error' besides failing the query: without a
    // listener, that would end the process.
    const onError = (error: Error): void => {
      broken = error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackFailed) {
        broken = rollbackFailed instanceof Error ? rollbackFailed : new Error(String(rollbackFailed));
      }
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }
}
