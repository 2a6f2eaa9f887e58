import Database from 'better-sqlite3';
import type { KeySettlement } from '../gateway/payment-gateway.js';
import { GroupCommit } from '../sqlite/group-commit.js';

/** One row of the gateway's ledger: what happened to one idempotency key. */
export interface LedgerEntry {
  idempotencyKey: string;
  paymentId: string;
  amountCents: number;
  /** `charged` (money moved), `declined`, or `closed` (closed before any charge: it never will be). */
  outcome: 'charged' | 'declined' | 'closed';
  chargeId: string | null;
  declineCode: string | null;
  /** Requests with this key answered from the ledger instead of charging again. */
  replays: number;
}

/** What {@link GatewayLedger.charge} did with a request. */
export type LedgerResult =
  | { kind: 'applied'; entry: LedgerEntry }
  | { kind: 'replayed'; entry: LedgerEntry }
  | { kind: 'mismatch'; entry: LedgerEntry }
  | { kind: 'closed' };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS charges (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  idempotency_key TEXT NOT NULL,
  payment_id TEXT NOT NULL,
  amount_cents INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  charge_id TEXT,
  decline_code TEXT,
  replays INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS charges_by_key ON charges (idempotency_key);
`;

interface ChargeRow {
  idempotency_key: string;
  payment_id: string;
  amount_cents: number;
  outcome: LedgerEntry['outcome'];
  charge_id: string | null;
  decline_code: string | null;
  replays: number;
}

function toEntry(row: ChargeRow): LedgerEntry {
  return {
    idempotencyKey: row.idempotency_key,
    paymentId: row.payment_id,
    amountCents: row.amount_cents,
    outcome: row.outcome,
    chargeId: row.charge_id,
    declineCode: row.decline_code,
    replays: row.replays,
  };
}

/**
 * The mock gateway's durable ledger (SQLite, `synchronous=FULL`, group commit): a charge is on disk before it is
 * answered, and a key already in the ledger is answered from it, never charged again, as a real gateway's
 * idempotency layer does.
 *
 * The key is deliberately not a unique column: the ledger records what happened, and the audit, not a constraint,
 * is what proves that no payment was charged twice.
 */
export class GatewayLedger {
  private readonly db: Database.Database;
  private readonly byKey: Database.Statement<[string], ChargeRow>;
  private readonly insert: Database.Statement<[string, string, number, string, string | null, string | null]>;
  private readonly countReplay: Database.Statement<[string]>;
  private readonly commit: GroupCommit;

  /** @param path - the ledger's file (created if missing); `:memory:` for a throwaway one */
  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(SCHEMA);
    this.byKey = this.db.prepare('SELECT * FROM charges WHERE idempotency_key = ? ORDER BY seq LIMIT 1');
    this.insert = this.db.prepare(
      'INSERT INTO charges (idempotency_key, payment_id, amount_cents, outcome, charge_id, decline_code) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.countReplay = this.db.prepare('UPDATE charges SET replays = replays + 1 WHERE idempotency_key = ?');
    this.commit = new GroupCommit(this.db);
  }

  /**
   * Charges `key` once: the first request for a key records `decide()`'s outcome; later ones get the recorded one
   * (`replayed`), or `mismatch` when they name another payment or amount (a client bug), or `closed`.
   */
  charge(
    key: string,
    request: { paymentId: string; amountCents: number },
    decide: () => { outcome: 'charged'; chargeId: string } | { outcome: 'declined'; declineCode: string },
  ): Promise<LedgerResult> {
    return this.commit.run((): LedgerResult => {
      const existing = this.byKey.get(key);
      if (existing !== undefined) {
        if (existing.outcome === 'closed') return { kind: 'closed' };
        if (existing.payment_id !== request.paymentId || existing.amount_cents !== request.amountCents) {
          return { kind: 'mismatch', entry: toEntry(existing) };
        }
        this.countReplay.run(key);
        return { kind: 'replayed', entry: toEntry({ ...existing, replays: existing.replays + 1 }) };
      }
      const decision = decide();
      const chargeId = decision.outcome === 'charged' ? decision.chargeId : null;
      const declineCode = decision.outcome === 'declined' ? decision.declineCode : null;
      this.insert.run(key, request.paymentId, request.amountCents, decision.outcome, chargeId, declineCode);
      return { kind: 'applied', entry: toEntry(this.byKey.get(key) as ChargeRow) };
    });
  }

  /** Closes `key`: what it came to, and no charge with it from now on (a never-charged key is recorded `closed`). */
  closeKey(key: string, paymentId: string): Promise<KeySettlement> {
    return this.commit.run((): KeySettlement => {
      const existing = this.byKey.get(key);
      if (existing === undefined) {
        this.insert.run(key, paymentId, 0, 'closed', null, null);
        return { state: 'closed' };
      }
      if (existing.outcome === 'charged') return { state: 'charged', chargeId: existing.charge_id ?? '' };
      if (existing.outcome === 'declined') return { state: 'declined', code: existing.decline_code ?? 'declined' };
      return { state: 'closed' };
    });
  }

  /** Every entry, in the order they were recorded: what the audit reads. */
  entries(): LedgerEntry[] {
    return this.db.prepare<[], ChargeRow>('SELECT * FROM charges ORDER BY seq').all().map(toEntry);
  }

  /** Closes the database. */
  close(): void {
    this.db.close();
  }
}
