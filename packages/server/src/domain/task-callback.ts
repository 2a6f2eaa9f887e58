import type { TaskStatus } from '@retryd/core';

/**
 * The ends of a task a callback may be told of: `succeeded` (SUCCEEDED), `failed` (FAILED or EXHAUSTED: a dead
 * letter) and `cancelled` (CANCELLED).
 */
export const CALLBACK_ENDS = Object.freeze(['succeeded', 'failed', 'cancelled'] as const);
export type CallbackEnd = (typeof CALLBACK_ENDS)[number];

/**
 * Where and when a task's end is told (the task's `callback`, given at enqueue and never changed). When the task
 * ends in one of `on`, the store records in the same transition that a callback is owed (SQLite and PostgreSQL: a
 * trigger on the status; Redis: the script that ends it), and the callback relay (callbacks/callback-relay.ts) turns
 * it into a task of its own: a `POST` of {@link TaskEndedEvent} to `url`, retried under `policyId`.
 */
export interface TaskCallback {
  /** An absolute http or https URL, checked like a task's `targetUrl` (at enqueue, and at every attempt). */
  url: string;
  /** Which ends are told, at least one, each once, in {@link CALLBACK_ENDS} order. */
  on: CallbackEnd[];
  /** The named policy of the callback's own task, or null for the tenant's `default`. */
  policyId: string | null;
}

/** The end a final status counts as, or undefined for a live status. */
export function callbackEndOf(status: TaskStatus): CallbackEnd | undefined {
  switch (status) {
    case 'SUCCEEDED':
      return 'succeeded';
    case 'FAILED':
    case 'EXHAUSTED':
      return 'failed';
    case 'CANCELLED':
      return 'cancelled';
    default:
      return undefined;
  }
}

/** The body of a callback: what the caller is told of its task's end. */
export interface TaskEndedEvent {
  /** Always `task.ended`. */
  type: 'task.ended';
  taskId: string;
  /** The ended task's own idempotency key (the callback's task has one of its own, see {@link callbackKeyOf}). */
  idempotencyKey: string;
  /** SUCCEEDED, FAILED, EXHAUSTED or CANCELLED. */
  status: TaskStatus;
  /** Why a dead letter died (`deadLetterReason`), or null. */
  reason: string | null;
  /** Attempts made, over the task's whole life. */
  attempts: number;
  /** When it ended (epoch ms). */
  endedAt: number;
  /** The last attempt's answer: its status (null when none came) and the start of its body, or null with no attempt. */
  lastResponse: { status: number | null; excerpt: string | null } | null;
  /** The task's last error as its attempt log has it (`HTTP 503`, a timeout, a refused connection), or null. */
  lastError: string | null;
}

/** Most characters of the last response's body a callback carries. */
export const CALLBACK_EXCERPT_CHARS = 1024;

/**
 * The idempotency key of the task that tells the end of task `taskId` at `version` (the version its end gave it):
 * the same whichever instance relays it and however often, so a callback is made once; a task replayed and ended
 * again is told of its new end with a new key.
 */
export function callbackKeyOf(taskId: string, version: number): string {
  return `retryd-callback:${taskId}:${version}`;
}
