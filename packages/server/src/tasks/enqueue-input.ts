import { hash } from 'node:crypto';
import { canonicalJson, MAX_POLICY_MS, validatePolicy, type RetryPolicy } from '@retryd/core';
import { DEFAULT_POLICY_ID } from '../policies/default-policy.js';
import { POLICY_ID_PATTERN, POLICY_ID_RULE } from '../policies/policy-id.js';
import type { FieldError } from '../domain/errors.js';
import { connectWithinAttempt, isTimeoutMs, TIMEOUT_RULE, type TimeoutOverrides } from '../domain/attempt-timeouts.js';
import { charsetOf, UTF8_CHARSETS } from '../domain/charset.js';
import { isoDateTimeMs } from '../domain/iso-date-time.js';
import { MAX_VALUE_DEPTH, nestsDeeperThan } from '../domain/json-nesting.js';
import { SECRET_NAME_PATTERN, hasSecretReference, secretReferences } from '../secrets/secret-provider.js';
import { CALLBACK_ENDS, type CallbackEnd, type TaskCallback } from '../domain/task-callback.js';
import { GRPC_PROTOCOLS, grpcTargetOf, isGrpcUrl } from '../domain/grpc-target.js';
import { checkGrpcBody, checkGrpcHeaders, grpcMethodOf, inlinePolicyErrors } from './grpc-enqueue-rules.js';
import type { InlinePolicyMemo } from './inline-policy-memo.js';

/** Methods a task may use. CONNECT and TRACE are refused: neither makes sense through a retry service. */
export const TARGET_METHODS = Object.freeze(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const);

/**
 * Headers a task may not set (lower case): hop-by-hop headers (RFC 9110 §7.6.1), framing the HTTP client
 * computes itself (Host, Content-Length, Transfer-Encoding), and `Expect`, which undici refuses.
 * `Idempotency-Key` is allowed and taken as the task's key (retryd sends it on every attempt).
 */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);

/** The fields of an enqueue request (`POST /retry-tasks`, or one entry of a batch). */
export const ENQUEUE_FIELDS = Object.freeze([
  'targetUrl',
  'method',
  'headers',
  'body',
  'bodyRef',
  'policyId',
  'policy',
  'idempotencyKey',
  'delayMs',
  'notBefore',
  'secretHeaders',
  'sensitiveBody',
  'attemptTimeoutMs',
  'connectTimeoutMs',
  'callback',
] as const);

/**
 * Bounds of an enqueue request, in the manner of common proxies (nginx, HAProxy, Node's own HTTP server):
 *
 * - `headers`: most headers a task may carry (100);
 * - `headerNameLength`: longest header name (256 bytes; names are ASCII token characters);
 * - `headerValueLength`: longest header value (8,192 bytes; values are Latin-1, one byte a character);
 * - `headerBytes`: all names and values together (32 KiB), so a page of 1,000 tasks stays within tens of megabytes;
 * - `urlLength`, `keyLength`, `bodyRefLength`: longest `targetUrl` (8,192), idempotency key (255), `bodyRef` (2,048);
 * - `bodyDepth`: deepest nesting of a JSON `body` (64 levels of objects and arrays).
 */
export const ENQUEUE_LIMITS = Object.freeze({
  headers: 100,
  headerNameLength: 256,
  headerValueLength: 8192,
  headerBytes: 32 * 1024,
  urlLength: 8192,
  keyLength: 255,
  bodyRefLength: 2048,
  bodyDepth: MAX_VALUE_DEPTH,
});

/** A header name: token characters (RFC 9110 §5.6.2). */
export const HEADER_NAME_PATTERN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * A header value: tabs, visible ASCII, spaces and the Latin-1 characters U+00A0–U+00FF (RFC 9110's field-value, one
 * byte a character on the wire). No control character: not CR, LF or NUL, nor DEL or the C1 controls U+0080–U+009F
 * (NEL, U+0085, ends a line for some parsers downstream, so it could split a header as CR LF would).
 */
export const HEADER_VALUE_PATTERN = /^[\t\x20-\x7e\xa0-\xff]*$/;
/** What {@link HEADER_VALUE_PATTERN} asks, for the messages that refuse a value (never quoting it). */
export const HEADER_VALUE_RULE = 'Latin-1 characters without control characters (tab allowed; no CR, LF, NUL, DEL or U+0080–U+009F such as NEL)';
/** An idempotency key: 1 or more visible ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]+$/;
/** Latest epoch ms a `Date` can hold. */
/** The latest time `notBefore` may name: the last millisecond a JavaScript Date holds. */
export const MAX_EPOCH_MS = 8.64e15;

/** A task's `callback` as given, its URL parsed: the guard checks it before the task is stored. */
export interface ParsedCallback extends Omit<TaskCallback, 'url'> {
  url: URL;
}

/** When the first attempt is due: a delay from the time of enqueue, or an absolute time. */
export type FirstAttempt = { delayMs: number } | { notBefore: number } | { now: true };

/** A valid enqueue request, normalised; the service adds the ids, the times and the body's home. */
export interface ParsedEnqueue {
  targetUrl: URL;
  method: string;
  /** The target's headers, without `Idempotency-Key`; `content-type: application/json` added for a JSON body. */
  headers: Record<string, string>;
  /** The bytes to send, as text (a JSON value already serialised), or null for none. */
  body: string | null;
  /**
   * The caller's own object holding the body (`s3://bucket/key`), checked against the blob store at enqueue; null
   * when the body is inline or absent. Never set together with `body`.
   */
  bodyRef: string | null;
  /** The named policy (`default` when the request names none and gives none inline), or null with `policy`. */
  policyId: string | null;
  policy: RetryPolicy | null;
  /** The caller's key (from `idempotencyKey` or the `Idempotency-Key` header), if any. */
  idempotencyKey: string | undefined;
  firstAttempt: FirstAttempt;
  /** Header names (lower case) the task marked secret, besides the credential names; each names one of `headers`. */
  secretHeaders: ReadonlySet<string>;
  /** The body is stored encrypted and shown redacted. */
  sensitiveBody: boolean;
  /** The task's own attempt timeout in ms, or null: its target's, else the service's. */
  attemptTimeoutMs: number | null;
  /** The task's own connect timeout in ms (never above its own attempt timeout), or null. */
  connectTimeoutMs: number | null;
  /** Who is told when the task ends, its URL parsed (checked against the target guard at enqueue), or null. */
  callback: ParsedCallback | null;
  /** SHA-256 (hex) of the canonical request: equal for a replayed enqueue, different for another request. */
  requestHash: string;
}

export type EnqueueParse = { ok: true; value: ParsedEnqueue } | { ok: false; errors: FieldError[] };

function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  // Never a deep value through JSON.stringify (its recursion overflows the stack); its kind says enough.
  if (typeof value === 'object' && value !== null && nestsDeeperThan(value, 2)) return Array.isArray(value) ? 'an array' : 'an object';
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** {@link ENQUEUE_FIELDS} for the check of each field given: a lookup, not a scan of the list for each. */
const KNOWN_FIELDS: ReadonlySet<string> = new Set(ENQUEUE_FIELDS);
/** What a request without `secretHeaders` marks: nothing (one set for them all; never changed). */
const NO_SECRET_HEADERS: ReadonlySet<string> = new Set();
/** The timeouts of a request that gives neither (one object for them all; only read). */
const NO_TIMEOUTS: Readonly<TimeoutOverrides> = Object.freeze({ attemptTimeoutMs: null, connectTimeoutMs: null });

/**
 * Checks an enqueue request beyond its JSON schema and normalises it. Reports every broken rule at once, each
 * naming the field (prefixed with `path`, e.g. `tasks[3].`) and the rule. Messages never repeat a header value
 * or the body: they may hold secrets.
 *
 * @param input - the parsed JSON of one request
 * @param path - prefix of field names, '' for a single request
 * @param memo - the inline policy the call's earlier entries gave, when they share one (see `InlinePolicyMemo`)
 */
export function parseEnqueueInput(input: unknown, path = '', memo?: InlinePolicyMemo): EnqueueParse {
  const errors: FieldError[] = [];
  const name = (field: string) => `${path}${field}`;
  const fail = (field: string, rule: string, got?: string) =>
    errors.push({ field: name(field), rule, message: `${name(field)} must be ${rule}${got === undefined ? '' : `, got ${got}`}` });

  if (!isRecord(input)) {
    const field = path === '' ? 'body' : path.replace(/\.$/, '');
    return { ok: false, errors: [{ field, rule: 'a JSON object', message: `${field} must be a JSON object, got ${show(input)}` }] };
  }
  for (const key of Object.keys(input)) {
    if (!KNOWN_FIELDS.has(key)) fail(key, `absent (known fields: ${ENQUEUE_FIELDS.join(', ')})`);
  }

  const targetUrl = parseTargetUrl(input.targetUrl, fail, 'targetUrl', true);
  // By its scheme, even when the rest of the URL is refused: the other fields are then checked by a gRPC task's rules.
  const grpc = targetUrl !== undefined ? isGrpcUrl(targetUrl) : typeof input.targetUrl === 'string' && /^grpcs?:\/\//i.test(input.targetUrl);
  let method = input.method;
  if (grpc) method = grpcMethodOf(method, fail);
  else if (typeof method !== 'string' || !(TARGET_METHODS as readonly string[]).includes(method)) {
    fail('method', `one of ${TARGET_METHODS.join(', ')}`, show(method));
  }
  const headers = parseHeaders(input.headers, name, errors);
  if (grpc) checkGrpcHeaders(headers, fail);
  const headerKey = takeHeader(headers, 'idempotency-key');
  const key = input.idempotencyKey;
  if (key !== undefined && (typeof key !== 'string' || key.length > ENQUEUE_LIMITS.keyLength || !IDEMPOTENCY_KEY_PATTERN.test(key))) {
    fail('idempotencyKey', `a string of 1 to ${ENQUEUE_LIMITS.keyLength} visible ASCII characters`, show(key));
  }
  if (headerKey !== undefined && (headerKey.length > ENQUEUE_LIMITS.keyLength || !IDEMPOTENCY_KEY_PATTERN.test(headerKey))) {
    fail('headers.Idempotency-Key', `1 to ${ENQUEUE_LIMITS.keyLength} visible ASCII characters`);
  } else if (headerKey !== undefined && typeof key === 'string' && key !== headerKey) {
    fail('headers.Idempotency-Key', 'equal to idempotencyKey when both are given');
  }

  const body = grpc ? checkGrpcBody(input.body, fail) : encodeBody(input.body, headers, method, fail);
  const bodyRef = parseBodyRef(input, method, fail);
  const { policyId, policy } = parsePolicyChoice(input, name, fail, errors, memo);
  if (policy !== null) errors.push(...inlinePolicyErrors(policy, grpc, name));
  const firstAttempt = parseFirstAttempt(input, fail);
  const secretHeaders = parseSecretHeaders(input.secretHeaders, headers, fail);
  const sensitiveBody = input.sensitiveBody ?? false;
  if (typeof sensitiveBody !== 'boolean') fail('sensitiveBody', 'a boolean', show(sensitiveBody));
  else if (sensitiveBody && input.bodyRef !== undefined && input.bodyRef !== null) {
    fail('sensitiveBody', "absent with bodyRef (retryd does not store a body given by reference: protect the caller's object)");
  }
  const timeouts = parseTimeouts(input, fail);
  const callback = parseCallback(input.callback, fail);

  if (errors.length > 0 || targetUrl === undefined) return { ok: false, errors };
  // One literal with every field, the hash filled in last: a spread copy gaining a key would give each parsed
  // request a map of its own, and every later read of it would miss the inline caches.
  const value: ParsedEnqueue = {
    targetUrl,
    method: method as string,
    headers,
    body,
    bodyRef,
    policyId,
    policy,
    idempotencyKey: typeof key === 'string' ? key : headerKey,
    firstAttempt,
    secretHeaders,
    sensitiveBody: sensitiveBody === true,
    attemptTimeoutMs: timeouts.attemptTimeoutMs,
    connectTimeoutMs: timeouts.connectTimeoutMs,
    callback,
    requestHash: '',
  };
  value.requestHash = requestHashOf(value, input.body, memo);
  return { ok: true, value };
}

/** Records a broken rule of `field`, with what was given when it is safe to repeat. */
export type Fail = (field: string, rule: string, got?: string) => void;

const TARGET_URL_RULE = `an absolute http, https, grpc or grpcs URL of at most ${ENQUEUE_LIMITS.urlLength} characters`;
const HTTP_URL_RULE = `an absolute http or https URL of at most ${ENQUEUE_LIMITS.urlLength} characters`;

function parseTargetUrl(raw: unknown, fail: Fail, field = 'targetUrl', grpcAllowed = false): URL | undefined {
  const rule = grpcAllowed ? TARGET_URL_RULE : HTTP_URL_RULE;
  // Parsed once: `URL.canParse` then `new URL` parsed every valid URL twice.
  const url = typeof raw === 'string' && raw.length <= ENQUEUE_LIMITS.urlLength ? URL.parse(raw) : null;
  if (url === null) {
    fail(field, rule, show(raw));
    return undefined;
  }
  if (grpcAllowed && GRPC_PROTOCOLS.has(url.protocol)) {
    const target = grpcTargetOf(url);
    if ('rule' in target) {
      fail(field, target.rule);
      return undefined;
    }
    // Stored normalised (the host as an http: URL spells it): one target, one key, however a task spells it.
    return new URL(target.href);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail(field, rule, JSON.stringify(url.protocol));
    return undefined;
  }
  if (url.username !== '' || url.password !== '') {
    // Credentials in a URL end up in logs and listings; an Authorization header is never logged.
    fail(field, 'a URL without user:password (send an Authorization header instead)');
    return undefined;
  }
  // URL keeps an explicit :0 (or :00) as port '0'. It names no service: each attempt would fail to connect, or reach
  // whatever the platform makes of port 0.
  if (url.port === '0') {
    fail(field, 'a URL whose port, when given, is 1 to 65535 (port 0 names no service)');
    return undefined;
  }
  return url;
}

function parseHeaders(raw: unknown, name: (f: string) => string, errors: FieldError[]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (raw === undefined) return headers;
  const push = (field: string, rule: string) =>
    errors.push({ field: name(field), rule, message: `${name(field)} must be ${rule}` });
  if (!isRecord(raw)) {
    push('headers', 'an object of header names to string values');
    return headers;
  }
  // Names, then values by name, in loops: the pairs of `Object.entries`, a set of the names seen and each header's field
  // name made whether or not it was refused were most of the allocations of a valid request's headers.
  const names = Object.keys(raw);
  if (names.length > ENQUEUE_LIMITS.headers) {
    push('headers', `an object of at most ${ENQUEUE_LIMITS.headers} headers`);
    return headers;
  }
  let bytes = 0;
  for (const header of names) {
    const value = raw[header];
    bytes += header.length + (typeof value === 'string' ? value.length : 0);
  }
  if (bytes > ENQUEUE_LIMITS.headerBytes) {
    push('headers', `at most ${ENQUEUE_LIMITS.headerBytes} bytes of names and values in all`);
  }
  // A name too long to repeat whole is cut in the field, and its rule gives its length: the answer stays small.
  const fieldOf = (header: string) => (header.length > ENQUEUE_LIMITS.headerNameLength ? `headers.${header.slice(0, 32)}...` : `headers.${header}`);
  const seen: string[] = [];
  for (const header of names) {
    const value = raw[header];
    const lower = header.toLowerCase();
    if (header.length > ENQUEUE_LIMITS.headerNameLength) {
      push(fieldOf(header), `a header name of at most ${ENQUEUE_LIMITS.headerNameLength} bytes, got ${header.length}`);
    } else if (!HEADER_NAME_PATTERN.test(header)) push(fieldOf(header), 'a header name made of token characters (RFC 9110)');
    else if (FORBIDDEN_HEADERS.has(lower)) push(fieldOf(header), 'absent: a hop-by-hop or framing header the HTTP client sets itself');
    else if (seen.includes(lower)) push(fieldOf(header), 'given once (header names ignore case)');
    if (typeof value !== 'string') push(fieldOf(header), 'a string');
    else if (value.length > ENQUEUE_LIMITS.headerValueLength || !HEADER_VALUE_PATTERN.test(value)) {
      push(fieldOf(header), `a header value of at most ${ENQUEUE_LIMITS.headerValueLength} bytes, ${HEADER_VALUE_RULE}`);
    } else if (hasSecretReference(value) && secretReferences(value).some((ref) => !SECRET_NAME_PATTERN.test(ref))) {
      push(fieldOf(header), 'a value whose {{secret:NAME}} references have names of 1 to 128 letters, digits or _');
    }
    seen.push(lower);
    if (typeof value === 'string') headers[header] = value;
  }
  return headers;
}

/** `secretHeaders`: names of headers in `headers` (any case) to keep as secrets; returned in lower case. */
function parseSecretHeaders(raw: unknown, headers: Record<string, string>, fail: Fail): ReadonlySet<string> {
  if (raw === undefined) return NO_SECRET_HEADERS;
  const marked = new Set<string>();
  const rule = `an array of at most ${ENQUEUE_LIMITS.headers} header names, each naming a header of headers`;
  if (!Array.isArray(raw) || raw.length > ENQUEUE_LIMITS.headers) {
    fail('secretHeaders', rule, show(raw));
    return marked;
  }
  const present = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
  raw.forEach((name: unknown, i) => {
    if (typeof name !== 'string' || !present.has(name.toLowerCase())) fail(`secretHeaders[${i}]`, 'the name of a header given in headers', show(name));
    else marked.add(name.toLowerCase());
  });
  return marked;
}

/** The name `headers` gives a header (any case), or undefined. */
function headerNamed(headers: Record<string, string>, lower: string): string | undefined {
  for (const name in headers) if (name.toLowerCase() === lower) return name;
  return undefined;
}

/** Removes a header (any case) and returns its value. */
function takeHeader(headers: Record<string, string>, lower: string): string | undefined {
  const found = headerNamed(headers, lower);
  if (found === undefined) return undefined;
  const value = headers[found];
  delete headers[found];
  return value;
}

function encodeBody(raw: unknown, headers: Record<string, string>, method: unknown, fail: Fail): string | null {
  if (raw === undefined || raw === null) return null;
  if (method === 'GET' || method === 'HEAD') {
    fail('body', `absent for ${method} (the HTTP client sends no body with it)`);
    return null;
  }
  const typeHeader = headerNamed(headers, 'content-type');
  // An inline body goes out as the UTF-8 bytes of its text: a content-type declaring another charset would have the
  // target read other characters than the caller's.
  const charset = typeHeader === undefined ? undefined : charsetOf(headers[typeHeader]);
  if (charset !== undefined && !UTF8_CHARSETS.has(charset)) fail(`headers.${typeHeader ?? 'content-type'}`, BODY_CHARSET_RULE);
  if (typeof raw === 'string') return raw;
  if (nestsDeeperThan(raw, ENQUEUE_LIMITS.bodyDepth)) {
    fail('body', `a JSON value nested at most ${ENQUEUE_LIMITS.bodyDepth} levels deep (objects and arrays)`);
    return null;
  }
  if (typeHeader === undefined) headers['content-type'] = 'application/json';
  return JSON.stringify(raw);
}

/** What a task's `Content-Type` must say of its charset when the task has an inline `body`. */
export const BODY_CHARSET_RULE =
  'a content-type without a charset, or with charset=utf-8, when body is given: retryd sends body as UTF-8 (give bytes of another charset by bodyRef)';

/** The syntax of `bodyRef`; the blob store checks the rest (bucket, tenant, existence) at enqueue. */
function parseBodyRef(input: Record<string, unknown>, method: unknown, fail: Fail): string | null {
  const raw = input.bodyRef;
  if (raw === undefined || raw === null) return null;
  if (input.body !== undefined && input.body !== null) {
    fail('bodyRef', 'absent when body is given (send the body inline in body, or name an object holding it in bodyRef, not both)');
    return null;
  }
  if (method === 'GET' || method === 'HEAD') {
    fail('bodyRef', `absent for ${method} (the HTTP client sends no body with it)`);
    return null;
  }
  if (typeof raw !== 'string' || raw.length > ENQUEUE_LIMITS.bodyRefLength || !raw.startsWith('s3://')) {
    fail('bodyRef', `an object URL, s3://<bucket>/<key>, of at most ${ENQUEUE_LIMITS.bodyRefLength} characters`, show(raw));
    return null;
  }
  return raw;
}

function parsePolicyChoice(
  input: Record<string, unknown>,
  name: (f: string) => string,
  fail: Fail,
  errors: FieldError[],
  memo: InlinePolicyMemo | undefined,
): { policyId: string | null; policy: RetryPolicy | null } {
  const { policyId, policy } = input;
  if (policyId !== undefined && policy !== undefined) {
    fail('policy', 'absent when policyId is given (name a registered policy or give one inline, not both)');
    return { policyId: null, policy: null };
  }
  if (policy !== undefined) {
    const checked = memo === undefined ? validatePolicy(policy, name('policy')) : memo.validate(policy, name('policy'));
    if (checked.ok) return { policyId: null, policy: checked.policy };
    errors.push(...checked.violations);
    return { policyId: null, policy: null };
  }
  if (policyId === undefined) return { policyId: DEFAULT_POLICY_ID, policy: null };
  if (typeof policyId !== 'string' || !POLICY_ID_PATTERN.test(policyId)) fail('policyId', POLICY_ID_RULE, show(policyId));
  return { policyId: typeof policyId === 'string' ? policyId : null, policy: null };
}

function parseFirstAttempt(input: Record<string, unknown>, fail: Fail): FirstAttempt {
  const { delayMs, notBefore } = input;
  if (delayMs !== undefined && notBefore !== undefined) {
    fail('notBefore', 'absent when delayMs is given (give one of them)');
    return { now: true };
  }
  if (delayMs !== undefined) {
    if (Number.isInteger(delayMs) && (delayMs as number) >= 0 && (delayMs as number) <= MAX_POLICY_MS) {
      return { delayMs: delayMs as number };
    }
    fail('delayMs', `an integer >= 0 and <= ${MAX_POLICY_MS}`, show(delayMs));
  }
  if (notBefore !== undefined) {
    const ms = typeof notBefore === 'string' ? isoDateTimeMs(notBefore) : notBefore;
    if (Number.isInteger(ms) && (ms as number) >= 0 && (ms as number) <= MAX_EPOCH_MS) return { notBefore: ms as number };
    fail('notBefore', 'epoch milliseconds (an integer >= 0) or an ISO 8601 date-time with a time zone', show(notBefore));
  }
  return { now: true };
}

/**
 * `callback`: absent (or null), or `{ url, on?, policyId? }`: `url` as a `targetUrl` must be, `on` at least one of
 * {@link CALLBACK_ENDS} each once (default: all of them, kept in that order), `policyId` a policy id (its existence is
 * checked with the task's own, before the task is stored).
 */
export function parseCallback(raw: unknown, fail: Fail): ParsedCallback | null {
  if (raw === undefined || raw === null) return null;
  if (!isRecord(raw)) {
    fail('callback', 'an object { url, on?, policyId? }', show(raw));
    return null;
  }
  const fields = ['url', 'on', 'policyId'];
  for (const key of Object.keys(raw)) {
    if (!fields.includes(key)) fail(`callback.${key}`, `absent (known fields: ${fields.join(', ')})`);
  }
  const url = parseTargetUrl(raw.url, fail, 'callback.url');
  let on: CallbackEnd[] = [...CALLBACK_ENDS];
  if (raw.on !== undefined) {
    const given = raw.on;
    const rule = `a non-empty array of ${CALLBACK_ENDS.join(', ')}, each at most once`;
    if (!Array.isArray(given) || given.length === 0 || new Set(given).size !== given.length || !given.every((end) => (CALLBACK_ENDS as readonly unknown[]).includes(end))) {
      fail('callback.on', rule, show(given));
    } else on = CALLBACK_ENDS.filter((end) => given.includes(end));
  }
  const policyId = raw.policyId ?? null;
  if (policyId !== null && (typeof policyId !== 'string' || !POLICY_ID_PATTERN.test(policyId))) fail('callback.policyId', POLICY_ID_RULE, show(policyId));
  if (url === undefined) return null;
  return { url, on, policyId: typeof policyId === 'string' ? policyId : null };
}

/** `attemptTimeoutMs` and `connectTimeoutMs`: each absent (or null), or a timeout; the connect one within the attempt one. */
function parseTimeouts(input: Record<string, unknown>, fail: Fail): Readonly<TimeoutOverrides> {
  if ((input.attemptTimeoutMs === undefined || input.attemptTimeoutMs === null) && (input.connectTimeoutMs === undefined || input.connectTimeoutMs === null)) {
    return NO_TIMEOUTS;
  }
  const own: TimeoutOverrides = { attemptTimeoutMs: null, connectTimeoutMs: null };
  for (const field of ['attemptTimeoutMs', 'connectTimeoutMs'] as const) {
    const raw = input[field];
    if (raw === undefined || raw === null) continue;
    if (isTimeoutMs(raw)) own[field] = raw;
    else fail(field, TIMEOUT_RULE, show(raw));
  }
  const tie = connectWithinAttempt(own);
  if (tie !== undefined) fail('connectTimeoutMs', tie, show(own.connectTimeoutMs));
  return own;
}

function requestHashOf(value: Omit<ParsedEnqueue, 'requestHash'>, rawBody: unknown, memo: InlinePolicyMemo | undefined): string {
  // One call (Node 20.12+): a Hash object per task cost more than the digest of its few hundred bytes.
  return hash('sha256', canonicalRequest(value, rawBody, memo), 'hex');
}

/**
 * The canonical text of a request, hashed into its `requestHash`: `canonicalJson` of
 *
 * ```
 * { method, targetUrl, headers: [[lower-case name, value], …] sorted by name,
 *   body: null | { text } | { json }, bodyRef?, policyId, policy, firstAttempt, secretHeaders? (sorted), sensitiveBody?,
 *   attemptTimeoutMs?, connectTimeoutMs?, callback?: { on, policyId, url } }
 * ```
 *
 * written out by hand in its members' sorted order (attemptTimeoutMs, body, bodyRef, callback, connectTimeoutMs, firstAttempt,
 * headers, method, policy, policyId, secretHeaders, sensitiveBody, targetUrl), with `canonicalJson` only for the parts of unknown shape (a JSON body, an
 * inline policy): the same text, a third of the work. The text must never change: stored tasks keep the hash of
 * theirs, and a replay after an upgrade is recognised by it (test/request-hash.test.ts pins it).
 *
 * - A JSON body is compared as data, so a client that re-sends it with its keys in another order replays.
 * - `bodyRef`, `secretHeaders`, `sensitiveBody`, the timeouts and `callback` appear only when given, so that the hash of every
 *   request without them is what it was before they existed.
 *
 * `memo`: where the inline policy's text is when the call's entries share it (the same text, written once).
 */
export function canonicalRequest(value: Omit<ParsedEnqueue, 'requestHash'>, rawBody: unknown, memo?: InlinePolicyMemo): string {
  const body =
    rawBody === undefined || rawBody === null
      ? 'null'
      : typeof rawBody === 'string'
        ? `{"text":${JSON.stringify(rawBody)}}`
        : `{"json":${canonicalJson(rawBody)}}`;
  const headers = canonicalHeaders(value.headers);
  const first = value.firstAttempt;
  const firstAttempt = 'delayMs' in first ? `{"delayMs":${first.delayMs}}` : 'notBefore' in first ? `{"notBefore":${first.notBefore}}` : '{"now":true}';
  return (
    (value.attemptTimeoutMs === null ? '{' : `{"attemptTimeoutMs":${value.attemptTimeoutMs},`) +
    `"body":${body}` +
    (value.bodyRef === null ? '' : `,"bodyRef":${JSON.stringify(value.bodyRef)}`) +
    (value.callback === null ? '' : `,"callback":${canonicalCallback(value.callback)}`) +
    (value.connectTimeoutMs === null ? '' : `,"connectTimeoutMs":${value.connectTimeoutMs}`) +
    `,"firstAttempt":${firstAttempt}` +
    `,"headers":[${headers}]` +
    `,"method":${JSON.stringify(value.method)}` +
    `,"policy":${value.policy === null ? 'null' : memo === undefined ? canonicalJson(value.policy) : memo.canonical(value.policy)}` +
    `,"policyId":${value.policyId === null ? 'null' : JSON.stringify(value.policyId)}` +
    (value.secretHeaders.size === 0 ? '' : `,"secretHeaders":${JSON.stringify([...value.secretHeaders].sort())}`) +
    (value.sensitiveBody ? ',"sensitiveBody":true' : '') +
    `,"targetUrl":${JSON.stringify(value.targetUrl.href)}}`
  );
}

/**
 * The members of the `headers` part of {@link canonicalRequest}: `["lower-case name","value"]` pairs sorted by name
 * (UTF-16 code units; equal names keep their order). By insertion, as a task has a few headers: the pairs made by
 * `Object.entries` and sorted by `sort` with a comparator allocated about a kilobyte a request, and took longer.
 */
function canonicalHeaders(headers: Record<string, string>): string {
  const originals = Object.keys(headers);
  const names = originals.map((name) => name.toLowerCase());
  for (let i = 1; i < names.length; i++) {
    const name = names[i] as string;
    const original = originals[i] as string;
    let j = i - 1;
    while (j >= 0 && (names[j] as string) > name) {
      names[j + 1] = names[j] as string;
      originals[j + 1] = originals[j] as string;
      j--;
    }
    names[j + 1] = name;
    originals[j + 1] = original;
  }
  let text = '';
  for (let i = 0; i < names.length; i++) {
    text += `${i === 0 ? '' : ','}[${JSON.stringify(names[i])},${JSON.stringify(headers[originals[i] as string])}]`;
  }
  return text;
}

/** A callback's part of {@link canonicalRequest}: `{"on":[…],"policyId":…,"url":…}`, its ends in their fixed order. */
function canonicalCallback(callback: ParsedCallback): string {
  const policyId = callback.policyId === null ? 'null' : JSON.stringify(callback.policyId);
  return `{"on":${JSON.stringify(callback.on)},"policyId":${policyId},"url":${JSON.stringify(callback.url.href)}}`;
}
