import { copyWith } from '../shared/copy-with.js';

/** What `fetch` takes as its first argument: a URL, as text or a `URL`, or a `Request`. */
export type FetchInput = string | URL | Request;

/**
 * A `fetch` call taken apart once so that every attempt can send it again: the URL, the method, the headers, and a
 * body that a second attempt can reuse (a stream, which cannot, is flagged instead).
 */
export interface ReplayableRequest {
  url: string;
  /** Upper case. */
  method: string;
  /** The init every attempt starts from (the caller's, with a buffered body when it had to be buffered). */
  init: RequestInit;
  /** The caller's headers as a `Headers`, made only when they had to be read or changed; else the caller's. */
  headers: RequestInit['headers'];
  /** The body, as the idempotency key identifies it (`undefined` for none). */
  keyBody: unknown;
  /** The body is a stream: it goes out once and cannot be retried. */
  stream: boolean;
  /** The caller's signal, from the init or the `Request`. */
  signal: AbortSignal | undefined;
}

// The Request properties that a plain init carries over to each attempt.
const REQUEST_FIELDS = ['cache', 'credentials', 'integrity', 'keepalive', 'mode', 'redirect', 'referrer', 'referrerPolicy'] as const;

const isRequest = (input: unknown): input is Request =>
  typeof input === 'object' && input !== null && !(input instanceof URL) && typeof (input as Request).method === 'string';

const isStream = (body: unknown): boolean =>
  typeof body === 'object' &&
  body !== null &&
  (typeof (body as ReadableStream).getReader === 'function' || Symbol.asyncIterator in body);

/**
 * Takes a `fetch` call's arguments apart (see {@link ReplayableRequest}). Strings, bytes, `URLSearchParams` and
 * `Blob`s are sent as they are on every attempt; a `Request`'s body and `FormData` are read into bytes once (a
 * `FormData` would otherwise get a new multipart boundary, so different bytes, on each attempt), with the
 * `Content-Type` that goes with them.
 */
export async function replayableRequest(input: FetchInput, init: RequestInit | undefined): Promise<ReplayableRequest> {
  return plainReplayableRequest(input, init) ?? (await bufferedReplayableRequest(input, init));
}

/**
 * {@link replayableRequest} without a promise, for the calls that need nothing read first: a URL (not a `Request`)
 * and a body that is none, text, bytes, `URLSearchParams` or a stream. Undefined for the others (a `Request`,
 * `FormData`, a `Blob`). Most calls are of this kind, and an `await` on each would be one more turn of the
 * microtask queue before the request goes out.
 */
export function plainReplayableRequest(input: FetchInput, init: RequestInit | undefined): ReplayableRequest | undefined {
  if (isRequest(input)) return undefined;
  const body: unknown = init?.body;
  if ((typeof FormData !== 'undefined' && body instanceof FormData) || (typeof Blob !== 'undefined' && body instanceof Blob)) return undefined;
  const base: RequestInit = init ?? NO_INIT;
  const method = base.method === undefined ? 'GET' : base.method.toUpperCase();
  return {
    url: typeof input === 'string' ? input : input.href,
    method,
    init: method === base.method || base.method === undefined ? base : copyWith(base, { method }),
    headers: base.headers,
    keyBody: body ?? undefined,
    stream: isStream(body),
    signal: base.signal ?? undefined,
  };
}

/** The init of a call that gave none; fetch only reads it, and every attempt copies it before adding to it. */
const NO_INIT: RequestInit = Object.freeze({});

async function bufferedReplayableRequest(input: FetchInput, init: RequestInit | undefined): Promise<ReplayableRequest> {
  let url: string;
  let base: RequestInit = init ?? {};
  let headers = init?.headers;
  let body: unknown = init?.body;
  let contentType: string | null = null;
  if (isRequest(input)) {
    url = input.url;
    const fromRequest: RequestInit = { method: input.method, signal: input.signal };
    for (const field of REQUEST_FIELDS) (fromRequest as Record<string, unknown>)[field] = input[field];
    base = Object.assign(fromRequest, init);
    headers ??= input.headers;
    if (body === undefined && input.body !== null) {
      body = new Uint8Array(await input.arrayBuffer());
      contentType = input.headers.get('content-type');
    }
  } else {
    url = typeof input === 'string' ? input : input.href;
  }
  const method = base.method === undefined ? 'GET' : base.method.toUpperCase();
  if (typeof FormData !== 'undefined' && body instanceof FormData) {
    const encoded = new Response(body);
    contentType = encoded.headers.get('content-type');
    body = new Uint8Array(await encoded.arrayBuffer());
  }
  if (contentType !== null) {
    const withType = new Headers(headers);
    if (!withType.has('content-type')) withType.set('content-type', contentType);
    headers = withType;
  }
  const stream = isStream(body) && !(typeof Blob !== 'undefined' && body instanceof Blob);
  let keyBody: unknown = body ?? undefined;
  if (typeof Blob !== 'undefined' && body instanceof Blob) keyBody = new Uint8Array(await body.arrayBuffer());
  return {
    url,
    method,
    // Upper case on the wire too: fetch normalises only the six standard methods, and servers reject a 'patch'.
    init: body === base.body && method === base.method ? base : copyWith(base, body === undefined ? { method } : { method, body: body as NonNullable<RequestInit['body']> }),
    headers,
    keyBody,
    stream,
    signal: base.signal ?? undefined,
  };
}
