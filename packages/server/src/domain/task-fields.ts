import { TaskStatus, type RetryPolicy } from '@retryd/core';
import type { StoredHeaders } from './header-value.js';
import type { TaskCallback } from './task-callback.js';

// The one definition of a task's stored fields. Everything that spells a task out field by field is derived from
// this table: the `RetryTask` type, the SQL column lists and row mappings of SQLite and PostgreSQL, the Redis hash
// and JSON layout, the API view and its JSON schema. A test fails when a Lua script's field list disagrees with it.
//
// Adding a field: one entry here (its place in the table is its place in rows and hashes), one migration per SQL
// store (`backends/sqlite/migrations`, `backends/postgres/migrations`), and whoever creates tasks (the enqueuer)
// gives it a value. See docs/architecture.md.

/**
 * How a field's value is kept, the same in every store:
 *
 * - `text`: a string. SQLite TEXT, PostgreSQL text (U+0000 replaced by U+FFFD, which text cannot hold).
 * - `integer`, `bigint`: a whole number. SQLite INTEGER; PostgreSQL integer or bigint (read back as a number).
 * - `real`: a number that may be fractional (epoch ms, durations). SQLite REAL, PostgreSQL double precision.
 * - `boolean`: SQLite 0/1, PostgreSQL boolean, Redis `1`/`0`.
 * - `json`: a JSON value. SQLite TEXT (parsed through a cache of frozen values), PostgreSQL `json` (its text as
 *   written: smaller than jsonb's binary form, and no statement reads inside it on a hot path).
 * - `json-string`: a string that may hold U+0000 (a body): SQLite TEXT, PostgreSQL bytea holding its UTF-8 bytes (text
 *   cannot hold U+0000). Both keep the string as UTF-8, the form it is sent in: a lone UTF-16 surrogate, which has no
 *   UTF-8 form, reads back as U+FFFD.
 * - `hex`: a digest as lower-case hex text (the request hash): SQLite BLOB, PostgreSQL bytea, holding its bytes (half
 *   the space of the text); read back as the same text, so comparing it stays exact. Redis keeps the text.
 * - `target-url`: the task's absolute URL (`targetUrl`), kept as text after its target key (`targetKey`, which every
 *   store keeps) when it begins with it: `/charges` for `https://api.example.com/charges` (`storedTargetUrl` in
 *   domain/target-key.ts), the whole URL otherwise. Read back whole; a URL that is not absolute is refused at the
 *   write.
 * - `uuid`: a UUID as canonical lower-case text (the task id): SQLite BLOB, PostgreSQL uuid, holding its 16 bytes
 *   (against 37 for the text, in the row and in every index that holds it); read back as the same text, and ordered
 *   as the text is. Redis keeps the text. Any other text is refused at the write (see domain/task-id.ts).
 * - `status`: a task's status, one of `TaskStatus`: SQLite keeps its number (`STATUS_CODES` in
 *   backends/sqlite/status-guards.ts), PostgreSQL and Redis its name.
 */
export type FieldCodec = 'text' | 'status' | 'integer' | 'bigint' | 'real' | 'boolean' | 'json' | 'json-string' | 'hex' | 'uuid' | 'target-url';

/** Where Redis keeps a field: in the task's record under the name `hash` (scripts read it), or in its fixed JSON part. */
export type RedisPlacement = { readonly hash: string } | 'data';

/** What the API shows of a field: its JSON schema in the `Task` component (every shown field is always present). */
export interface ApiField {
  readonly schema: Readonly<Record<string, unknown>>;
}

/** One stored field of a task. */
export interface FieldSpec {
  /** Its column in both SQL stores. */
  readonly column: string;
  readonly codec: FieldCodec;
  readonly nullable: boolean;
  readonly redis: RedisPlacement;
  /**
   * `never`: written once at insert (the request, the keys). `transitions`: changed by the store's transitions
   * (claims, completions, cancel, replay). A field that never changes may live in Redis's fixed JSON part. (The sealed
   * values in `headers` and `body` are re-sealed under a new key by `sealing.resealTask`, which writes them again,
   * with the same plain values, and leaves every `transitions` field alone.)
   */
  readonly changes: 'never' | 'transitions';
  /** Shown by the API (and with what schema), or absent: internal. */
  readonly api?: ApiField;
}

declare const VALUE: unique symbol;
/** A {@link FieldSpec} that also carries its TypeScript value type (a type only; nothing at run time). */
export type Field<T, S extends FieldSpec = FieldSpec> = S & { readonly [VALUE]: T };

/** Declares a field whose value has type `T`. */
function field<T>() {
  return <const S extends FieldSpec>(spec: S): Field<T, S> => spec as Field<T, S>;
}

const nullable = (type: string) => ({ type: [type, 'null'] }) as const;

/** A task's own timeout, in whole ms: given at enqueue and never changed, shown by the API, null for none. */
const ownTimeout = (column: string, which: string, flag: string) =>
  ({
    column,
    codec: 'integer',
    nullable: true,
    redis: 'data',
    changes: 'never',
    api: { schema: { ...nullable('integer'), description: `The task's own ${which} timeout in ms, or null: its target's, else the service's (${flag}).` } },
  }) as const;

/**
 * Every stored field of a task, in row order. The comment on each entry is the documentation of
 * `RetryTask`'s property of the same name.
 */
export const TASK_FIELDS = {
  /** The tenant the task belongs to; every read is scoped by it. */
  tenantId: field<string>()({ column: 'tenant_id', codec: 'text', nullable: false, redis: 'data', changes: 'never' }),
  /** UUIDv7, chosen by the service at enqueue. */
  taskId: field<string>()({
    column: 'task_id',
    codec: 'uuid',
    nullable: false,
    redis: 'data',
    changes: 'never',
    api: { schema: { type: 'string', format: 'uuid' } },
  }),
  /** Sent as `Idempotency-Key` on every attempt; never changes, not even on replay. */
  idempotencyKey: field<string>()({
    column: 'idempotency_key',
    codec: 'text',
    nullable: false,
    redis: 'data',
    changes: 'never',
    api: { schema: { type: 'string' } },
  }),
  /** SHA-256 of the enqueue request's canonical form: tells a replayed enqueue from a conflicting one. */
  requestHash: field<string>()({ column: 'request_hash', codec: 'hex', nullable: false, redis: 'data', changes: 'never' }),
  /** The URL every attempt calls (normalised: WHATWG `href`). */
  targetUrl: field<string>()({
    column: 'target_url',
    codec: 'target-url',
    nullable: false,
    redis: 'data',
    changes: 'never',
    api: { schema: { type: 'string' } },
  }),
  /**
   * The target: the origin of `targetUrl` (scheme, lower-case host, port unless the scheme's default), e.g.
   * `https://api.example.com`. Claims share their slots among targets, and a target can be held (see the store port).
   */
  targetKey: field<string>()({
    column: 'target_key',
    codec: 'text',
    nullable: false,
    redis: { hash: 'target' },
    changes: 'never',
    api: { schema: { type: 'string', description: 'The origin of targetUrl: claims are shared fairly among targets.' } },
  }),
  method: field<string>()({
    column: 'method',
    codec: 'text',
    nullable: false,
    redis: 'data',
    changes: 'never',
    api: { schema: { type: 'string' } },
  }),
  /**
   * Sent on every attempt (retryd's own headers are added). Secrets are never kept in plain text: a credential header
   * (by its name or marked by the task) is `{ enc }`, sealed with the encryption key, or `{ ref }`, a value holding
   * `{{secret:NAME}}` references; both are revealed only at dispatch and shown as `[REDACTED]`.
   */
  headers: field<StoredHeaders>()({
    column: 'headers',
    codec: 'json',
    nullable: false,
    redis: 'data',
    changes: 'never',
    api: {
      schema: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description:
          'Values of credential headers (names holding auth, token, key, secret, password, session, cookie, signature or credential, but Idempotency-Key and webhook-*; and those listed in --credential-headers) and of headers the task marked secret are shown as [REDACTED].',
      },
    },
  }),
  /** The body sent as is, when small enough to keep inline; sealed (`v1:<key id>:…`) when `sensitiveBody`. */
  body: field<string | null>()({
    column: 'body',
    codec: 'json-string',
    nullable: true,
    redis: 'data',
    changes: 'never',
    api: { schema: { ...nullable('string'), description: 'Shown as [REDACTED] when sensitiveBody.' } },
  }),
  /**
   * Where the body lives when it is not inline (then `body` is null): a ref the blob store made for a large body,
   * or the caller's own `s3://bucket/key` object given at enqueue (never deleted by retryd).
   */
  bodyRef: field<string | null>()({
    column: 'body_ref',
    codec: 'text',
    nullable: true,
    redis: 'data',
    changes: 'never',
    api: { schema: { ...nullable('string'), description: 'Set when the body is kept in object storage (body is then null).' } },
  }),
  /** A named policy, read afresh at each scheduling decision (a `PUT` changes future scheduling). */
  policyId: field<string | null>()({
    column: 'policy_id',
    codec: 'text',
    nullable: true,
    redis: { hash: 'policyId' },
    changes: 'never',
    api: { schema: nullable('string') },
  }),
  /** An inline policy, fixed at enqueue. Exactly one of `policyId` and `policy` is set. */
  policy: field<RetryPolicy | null>()({
    column: 'policy',
    codec: 'json',
    nullable: true,
    redis: 'data',
    changes: 'never',
    api: { schema: { anyOf: [{ $ref: 'RetryPolicy#' }, { type: 'null' }] } },
  }),
  status: field<TaskStatus>()({
    column: 'status',
    codec: 'status',
    nullable: false,
    redis: { hash: 'status' },
    changes: 'transitions',
    api: { schema: { type: 'string', enum: Object.values(TaskStatus) } },
  }),
  /** Attempts made so far, over the task's whole life (replays included). */
  attemptNumber: field<number>()({
    column: 'attempt_number',
    codec: 'integer',
    nullable: false,
    redis: { hash: 'attempt' },
    changes: 'transitions',
    api: { schema: { type: 'integer', description: 'Attempts made so far, replays included.' } },
  }),
  /** `attemptNumber` when the current run began: 0, or its value at the last replay. A run gets `maxAttempts` attempts. */
  runAttemptOffset: field<number>()({
    column: 'run_attempt_offset',
    codec: 'integer',
    nullable: false,
    redis: { hash: 'runOffset' },
    changes: 'transitions',
  }),
  /**
   * When the current run began: the task's creation (`createdAt`), or its latest replay. The origin of `totalBudgetMs`,
   * so time queued, delayed, held and waiting on Retry-After all counts. Null only on a task enqueued by a version that
   * set it at the first attempt and not tried yet: its budget counts from that attempt.
   */
  runStartedAt: field<number | null>()({
    column: 'run_started_at',
    codec: 'real',
    nullable: true,
    redis: { hash: 'runStart' },
    changes: 'transitions',
  }),
  /** The delay chosen before the latest retry (DECORRELATED jitter reads it). */
  lastDelayMs: field<number>()({
    column: 'last_delay_ms',
    codec: 'real',
    nullable: false,
    redis: { hash: 'lastDelay' },
    changes: 'transitions',
  }),
  /** When the task is due (PENDING), or null once it no longer will be. */
  nextAttemptAt: field<number | null>()({
    column: 'next_attempt_at',
    codec: 'real',
    nullable: true,
    redis: { hash: 'due' },
    changes: 'transitions',
    api: { schema: { ...nullable('integer'), description: 'When a PENDING task is due (epoch ms).' } },
  }),
  createdAt: field<number>()({
    column: 'created_at',
    codec: 'real',
    nullable: false,
    redis: 'data',
    changes: 'never',
    api: { schema: { type: 'integer' } },
  }),
  updatedAt: field<number>()({
    column: 'updated_at',
    codec: 'real',
    nullable: false,
    redis: { hash: 'updated' },
    changes: 'transitions',
    api: { schema: { type: 'integer' } },
  }),
  /** Owner of the current lease (IN_FLIGHT only). */
  leaseOwner: field<string | null>()({
    column: 'lease_owner',
    codec: 'text',
    nullable: true,
    redis: { hash: 'owner' },
    changes: 'transitions',
  }),
  /** When the current lease lapses (IN_FLIGHT only); after that the task is due again. */
  leaseExpiresAt: field<number | null>()({
    column: 'lease_expires_at',
    codec: 'real',
    nullable: true,
    redis: { hash: 'leaseUntil' },
    changes: 'transitions',
    api: { schema: { ...nullable('integer'), description: 'When an IN_FLIGHT task is due again if its worker dies.' } },
  }),
  /** Raised by every claim; a completion must present the value it was claimed with. */
  fencingToken: field<number>()({
    column: 'fencing_token',
    codec: 'bigint',
    nullable: false,
    redis: { hash: 'token' },
    changes: 'transitions',
  }),
  /** Raised by every change; the optimistic check of `replayTask`. */
  version: field<number>()({ column: 'version', codec: 'bigint', nullable: false, redis: { hash: 'version' }, changes: 'transitions' }),
  /** A cancel arrived while an attempt was in flight: the task is cancelled when that attempt ends. */
  cancelRequested: field<boolean>()({
    column: 'cancel_requested',
    codec: 'boolean',
    nullable: false,
    redis: { hash: 'cancel' },
    changes: 'transitions',
    api: { schema: { type: 'boolean' } },
  }),
  lastError: field<string | null>()({
    column: 'last_error',
    codec: 'text',
    nullable: true,
    redis: { hash: 'error' },
    changes: 'transitions',
    api: { schema: nullable('string') },
  }),
  lastResponseStatus: field<number | null>()({
    column: 'last_response_status',
    codec: 'integer',
    nullable: true,
    redis: { hash: 'httpStatus' },
    changes: 'transitions',
    api: { schema: nullable('integer') },
  }),
  /** Why a FAILED or EXHAUSTED task died. */
  deadLetterReason: field<string | null>()({
    column: 'dead_letter_reason',
    codec: 'text',
    nullable: true,
    redis: { hash: 'deadReason' },
    changes: 'transitions',
    api: { schema: nullable('string') },
  }),
  /** W3C `traceparent` of the enqueue request, carried to every attempt. */
  traceContext: field<string | null>()({
    column: 'trace_context',
    codec: 'text',
    nullable: true,
    redis: 'data',
    changes: 'never',
  }),
  /**
   * The caller marked the body sensitive: it is stored sealed with the encryption key (inline or in the blob store),
   * opened only at dispatch, and shown as `[REDACTED]`. False for tasks stored before it existed.
   */
  sensitiveBody: field<boolean>()({
    column: 'sensitive_body',
    codec: 'boolean',
    nullable: false,
    redis: 'data',
    changes: 'never',
    api: { schema: { type: 'boolean', description: 'The body is stored encrypted and shown as [REDACTED].' } },
  }),
  /**
   * When a finished task is deleted, with its attempt log, body and idempotency key (epoch ms): set when it ends, from
   * the retention of its outcome (the service's, its tenant's or its policy's); null while it is live, and for tasks
   * that ended before retention existed (kept until deleted by hand).
   */
  expiresAt: field<number | null>()({
    column: 'expires_at',
    codec: 'real',
    nullable: true,
    redis: { hash: 'expires' },
    changes: 'transitions',
    api: {
      schema: {
        ...nullable('integer'),
        description:
          'When a finished task is deleted with its attempts and its idempotency key (epoch ms): the same key enqueued after that makes a new task. Null while the task is live.',
      },
    },
  }),
  /**
   * The most time each attempt may take (Cloud Tasks' `dispatchDeadline`), in ms, given at enqueue; null: its target's
   * (`attemptTimeoutMs` of its settings), else the service's (`--attempt-timeout`). See domain/attempt-timeouts.ts.
   */
  attemptTimeoutMs: field<number | null>()(ownTimeout('attempt_timeout_ms', 'attempt', '--attempt-timeout')),
  /** The most time each attempt may spend opening its connection, in ms; null: its target's, else the service's. */
  connectTimeoutMs: field<number | null>()(ownTimeout('connect_timeout_ms', 'connect', '--connect-timeout')),
  /**
   * Who is told when the task ends, and of which ends (see domain/task-callback.ts), or null. Kept in Redis's record,
   * not its fixed JSON part: the script that ends a task reads it there to owe the callback in the same write.
   */
  callback: field<TaskCallback | null>()({
    column: 'callback',
    codec: 'json',
    nullable: true,
    redis: { hash: 'callback' },
    changes: 'never',
    api: {
      schema: {
        anyOf: [{ $ref: 'TaskCallback#' }, { type: 'null' }],
        description: 'Who is told when the task ends (a POST of a task.ended event, as a task of its own), or null.',
      },
    },
  }),
} as const;

/** The definition table's type. */
export type TaskFields = typeof TASK_FIELDS;
/** The name of one stored field. */
export type TaskFieldName = keyof TaskFields;
/** The value type a field was declared with. */
export type FieldValue<F> = F extends { readonly [VALUE]: infer T } ? T : never;

/**
 * A call that retryd makes on a service's behalf until it succeeds or its policy gives up: one value per entry of
 * {@link TASK_FIELDS}. Times are epoch milliseconds.
 */
export type RetryTask = { -readonly [K in TaskFieldName]: FieldValue<TaskFields[K]> };

/** The field names in row order: the order of SQL column lists, of positional rows, and of task literals. */
export const TASK_FIELD_NAMES = Object.freeze(Object.keys(TASK_FIELDS) as TaskFieldName[]);

/** Each field's spec, in row order. */
export const TASK_FIELD_SPECS: readonly (FieldSpec & { readonly name: TaskFieldName })[] = Object.freeze(
  TASK_FIELD_NAMES.map((name) => Object.freeze({ name, ...(TASK_FIELDS[name] as FieldSpec) })),
);

/** The names of the fields the API shows. */
export type TaskViewFieldName = {
  [K in TaskFieldName]: TaskFields[K] extends { readonly api: ApiField } ? K : never;
}[TaskFieldName];

/** The fields the API shows, in row order. */
export const TASK_VIEW_FIELD_NAMES = Object.freeze(
  TASK_FIELD_NAMES.filter((name) => (TASK_FIELDS[name] as FieldSpec).api !== undefined) as TaskViewFieldName[],
);
