import Database from 'better-sqlite3';
import { GroupCommit } from '../sqlite/group-commit.js';
import type { PaymentRequest } from '../payment/payment-request.js';
import { movePayment } from '../payment/payment-transitions.js';
import type { PaymentEvent, PaymentStatus } from '../payment/payment-status.js';

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
  /** The retryd task retrying the charge, once handed off. */
  retryTaskId: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Fields a move may set beside the status. */
export type PaymentPatch = Partial<Pick<Payment, 'reason' | 'chargeId' | 'retryTaskId'>>;

/** What {@link PaymentStore.accept} did. */
export type AcceptResult = { kind: 'created' | 'existing'; payment: Payment } | { kind: 'conflict'; payment: Payment };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS payments (
  payment_id TEXT PRIMARY KEY,
  amount_cents INTEGER NOT NULL,
  card TEXT NOT NULL,
  idempotency_key TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  reason TEXT,
  charge_id TEXT,
  retry_task_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_by_status ON payments (status);
CREATE TABLE IF NOT EXISTS payment_moves (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  payment_id TEXT NOT NULL,
  from_status TEXT NOT NULL,
  event TEXT NOT NULL,
  to_status TEXT NOT NULL,
  at INTEGER NOT NULL
);
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
  created_at: number;
  updated_at: number;
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
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The payments app's durable store (SQLite, WAL, `synchronous=FULL`): the payments, each with its idempotency key
 * (the journal: written and fsynced before the first send, so a worker that crashes mid-flight finds the payment
 * SENDING and its key on restart), and every move of the state machine in `payment_moves`. Writes resolve once
 * on disk; concurrent ones share a commit ({@link GroupCommit}).
 */
export class PaymentStore {
  private readonly db: Database.Database;
  private readonly commit: GroupCommit;
  private readonly byId: Database.Statement<[string], PaymentRow>;

  /** @param path - the database file (created if missing) */
  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    this.byId = this.db.prepare('SELECT * FROM payments WHERE payment_id = ?');
    this.commit = new GroupCommit(this.db);
  }

  /**
   * Journals a payment as PENDING with `idempotencyKey`, once: the same request again is `existing` (a client
   * retrying its submit), another amount or card under the same id a `conflict`.
   */
  accept(request: PaymentRequest, idempotencyKey: string, now: number): Promise<AcceptResult> {
    return this.commit.run((): AcceptResult => {
      const existing = this.byId.get(request.paymentId);
      if (existing !== undefined) {
        const payment = toPayment(existing);
        const same = payment.amountCents === request.amountCents && payment.card === request.card;
        return { kind: same ? 'existing' : 'conflict', payment };
      }
      this.db
        .prepare(
          `INSERT INTO payments (payment_id, amount_cents, card, idempotency_key, status, created_at, updated_at)
           VALUES (?, ?, ?, ?, 'PENDING', ?, ?)`,
        )
        .run(request.paymentId, request.amountCents, request.card, idempotencyKey, now, now);
      return { kind: 'created', payment: toPayment(this.byId.get(request.paymentId) as PaymentRow) };
    });
  }

  /** The payment, or undefined. */
  get(paymentId: string): Payment | undefined {
    const row = this.byId.get(paymentId);
    return row === undefined ? undefined : toPayment(row);
  }

  /**
   * Applies `events` in turn to the payment (each checked by the state machine) and `patch`, in one transaction.
   *
   * @throws IllegalPaymentMoveError when a move is not in the lifecycle; nothing is written then
   */
  move(paymentId: string, events: readonly PaymentEvent[], patch: PaymentPatch, now: number): Promise<Payment> {
    return this.commit.run((): Payment => {
      const row = this.byId.get(paymentId);
      if (row === undefined) throw new Error(`no payment ${paymentId}`);
      let status = row.status;
      const log = this.db.prepare('INSERT INTO payment_moves (payment_id, from_status, event, to_status, at) VALUES (?, ?, ?, ?, ?)');
      for (const event of events) {
        const next = movePayment(status, event);
        log.run(paymentId, status, event, next, now);
        status = next;
      }
      this.db
        .prepare(
          `UPDATE payments SET status = ?, reason = COALESCE(?, reason), charge_id = COALESCE(?, charge_id),
           retry_task_id = COALESCE(?, retry_task_id), updated_at = ? WHERE payment_id = ?`,
        )
        .run(status, patch.reason ?? null, patch.chargeId ?? null, patch.retryTaskId ?? null, now, paymentId);
      return toPayment(this.byId.get(paymentId) as PaymentRow);
    });
  }

  /** Every payment in one of `statuses`, oldest first. */
  withStatus(statuses: readonly PaymentStatus[]): Payment[] {
    const marks = statuses.map(() => '?').join(', ');
    return this.db
      .prepare<PaymentStatus[], PaymentRow>(`SELECT * FROM payments WHERE status IN (${marks}) ORDER BY created_at, payment_id`)
      .all(...statuses)
      .map(toPayment);
  }

  /** How many payments are in each status. */
  counts(): Partial<Record<PaymentStatus, number>> {
    const rows = this.db.prepare<[], { status: PaymentStatus; n: number }>('SELECT status, COUNT(*) AS n FROM payments GROUP BY status').all();
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  /** Every payment: what the audit reads. */
  all(): Payment[] {
    return this.db.prepare<[], PaymentRow>('SELECT * FROM payments ORDER BY created_at, payment_id').all().map(toPayment);
  }

  /** Closes the database. */
  close(): void {
    this.db.close();
  }
}
