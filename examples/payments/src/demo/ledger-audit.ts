import type { LedgerEntry } from '../mock-gateway/gateway-ledger.js';
import { PaymentStatus } from '../payment/payment-status.js';
import type { Payment } from '../payments-app/payment-store.js';

/** What the audit found; every list of payment ids must be empty for the run to pass. */
export interface AuditReport {
  submitted: number;
  done: number;
  dead: number;
  /** DEAD payments by reason (the reason up to its details). */
  deadByReason: Record<string, number>;
  /** Payments whose charge was handed to the retryd service. */
  handedToRetryd: number;
  /** Charges the gateway applied. */
  charges: number;
  /** Duplicate requests the gateway answered from its ledger instead of charging again. */
  duplicatesAbsorbed: number;
  violations: {
    /** Payments charged more than once by the gateway. */
    doubleCharges: string[];
    /** Payments submitted (and acknowledged) that the app does not know. */
    lost: string[];
    /** Charged at the gateway, but not DONE in the app (money taken, payment not booked). */
    chargedNotDone: string[];
    /** DONE in the app with no matching charge (same charge id and amount) at the gateway. */
    doneNotCharged: string[];
    /** Neither DONE nor DEAD. */
    notFinal: string[];
    /** DEAD with no reason. */
    deadWithoutReason: string[];
  };
  /** Whether every violation list is empty. */
  ok: boolean;
}

/** The headline of a DEAD payment's reason: `exhausted: max_attempts after 6 attempts …` → `exhausted: max_attempts`. */
export function reasonHeadline(reason: string): string {
  return reason.split(' after ')[0]?.split(' (')[0] ?? reason;
}

/**
 * Audits the app's payments against the gateway's ledger: 0 double charges, 0 lost payments, every charge booked
 * and every booking charged, every payment DONE or DEAD with a reason. Pure.
 */
export function auditLedgers(submitted: readonly string[], payments: readonly Payment[], ledger: readonly LedgerEntry[]): AuditReport {
  const byId = new Map(payments.map((p) => [p.paymentId, p]));
  const chargesOf = new Map<string, LedgerEntry[]>();
  for (const entry of ledger) {
    if (entry.outcome !== 'charged') continue;
    chargesOf.set(entry.paymentId, [...(chargesOf.get(entry.paymentId) ?? []), entry]);
  }
  const deadByReason: Record<string, number> = {};
  const violations: AuditReport['violations'] = {
    doubleCharges: [...chargesOf].filter(([, charges]) => charges.length > 1).map(([id]) => id),
    lost: submitted.filter((id) => !byId.has(id)),
    chargedNotDone: [...chargesOf.keys()].filter((id) => byId.get(id)?.status !== PaymentStatus.DONE),
    doneNotCharged: [],
    notFinal: [],
    deadWithoutReason: [],
  };
  for (const payment of payments) {
    if (payment.status === PaymentStatus.DONE) {
      const charges = chargesOf.get(payment.paymentId) ?? [];
      const matches = charges.some((c) => c.chargeId === payment.chargeId && c.amountCents === payment.amountCents);
      if (!matches) violations.doneNotCharged.push(payment.paymentId);
    } else if (payment.status === PaymentStatus.DEAD) {
      if (payment.reason === null || payment.reason === '') violations.deadWithoutReason.push(payment.paymentId);
      else deadByReason[reasonHeadline(payment.reason)] = (deadByReason[reasonHeadline(payment.reason)] ?? 0) + 1;
    } else {
      violations.notFinal.push(payment.paymentId);
    }
  }
  return {
    submitted: submitted.length,
    done: payments.filter((p) => p.status === PaymentStatus.DONE).length,
    dead: payments.filter((p) => p.status === PaymentStatus.DEAD).length,
    deadByReason,
    handedToRetryd: payments.filter((p) => p.retryTaskId !== null).length,
    charges: ledger.filter((e) => e.outcome === 'charged').length,
    duplicatesAbsorbed: ledger.reduce((sum, e) => sum + e.replays, 0),
    violations,
    ok: Object.values(violations).every((ids) => ids.length === 0),
  };
}

/** The report as the lines the demo prints. */
export function formatAudit(report: AuditReport): string[] {
  const line = (label: string, value: number): string => `${label.padEnd(32)}${String(value).padStart(6)}`;
  const lines = [
    line('payments submitted', report.submitted),
    line('handed to retryd', report.handedToRetryd),
    line('DONE', report.done),
    line('DEAD', report.dead),
    ...Object.entries(report.deadByReason)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([reason, n]) => line(`  ${reason}`, n)),
    line('gateway charges', report.charges),
    line('duplicates absorbed by the key', report.duplicatesAbsorbed),
    'violations:',
  ];
  for (const [name, ids] of Object.entries(report.violations)) {
    lines.push(`${line(`  ${name}`, ids.length)}${ids.length > 0 ? `  (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''})` : ''}`);
  }
  lines.push(report.ok ? 'AUDIT PASSED' : 'AUDIT FAILED');
  return lines;
}
