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
  /** Charge tasks in retryd's dead letters (FAILED or EXHAUSTED). */
  retrydDeadLetters: number;
  /** Of those, payments that are DONE: the last attempt was charged but its answer lost, found by closing the key. */
  deadLettersCharged: number;
  /** Callbacks retryd gave up on (their payments were then settled by the worker's start-up pass). */
  callbackDeadLetters: number;
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
    /** DEAD after a hand-off, but their retryd task is not in retryd's dead letters. */
    deadNotDeadLettered: string[];
  };
  /** Whether every violation list is empty. */
  ok: boolean;
}

/** The headline of a DEAD payment's reason: `exhausted: max_attempts after 6 attempts …` → `exhausted: max_attempts`. */
export function reasonHeadline(reason: string): string {
  return reason.split(' after ')[0]?.split(' (')[0] ?? reason;
}

/** What the audit compares. */
export interface AuditInput {
  /** The payment ids the client submitted and had acknowledged. */
  submitted: readonly string[];
  /** The app's payments. */
  payments: readonly Payment[];
  /** The gateway's ledger. */
  ledger: readonly LedgerEntry[];
  /** The task ids of retryd's dead letters, the charges' (not the callbacks'). */
  retrydDeadLetters: readonly string[];
  /** How many callbacks are in retryd's dead letters. Default 0. */
  callbackDeadLetters?: number;
}

/**
 * Audits the app's payments against the gateway's ledger and retryd's dead letters: 0 double charges, 0 lost
 * payments, every charge booked and every booking charged, every payment DONE or DEAD with a reason, and every
 * payment that died after a hand-off dead-lettered in retryd. Pure.
 */
export function auditLedgers({ submitted, payments, ledger, retrydDeadLetters, callbackDeadLetters = 0 }: AuditInput): AuditReport {
  const deadLetters = new Set(retrydDeadLetters);
  const handedOff = payments.filter((p) => p.retryTaskId !== null);
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
    deadNotDeadLettered: handedOff
      .filter((p) => p.status === PaymentStatus.DEAD && !deadLetters.has(p.retryTaskId as string))
      .map((p) => p.paymentId),
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
    handedToRetryd: handedOff.length,
    retrydDeadLetters: deadLetters.size,
    deadLettersCharged: handedOff.filter((p) => p.status === PaymentStatus.DONE && deadLetters.has(p.retryTaskId as string)).length,
    callbackDeadLetters,
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
    line('retryd dead letters', report.retrydDeadLetters),
    line('  of them charged (answer lost)', report.deadLettersCharged),
    line('callbacks dead-lettered', report.callbackDeadLetters),
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
