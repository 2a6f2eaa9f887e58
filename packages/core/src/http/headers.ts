/** One header's value in a plain object or a `Map`: repeated fields arrive as arrays. */
export type HeaderFieldValue = string | readonly string[] | undefined;

/**
 * Response headers in any of the shapes HTTP clients hand out: a WHATWG `Headers` (`fetch`), a plain object
 * (undici's `request`, `node:http`'s `IncomingHttpHeaders`) or a `Map`. Names are matched case-insensitively
 * in all three, whatever case the object's keys are in.
 */
export type HeadersLike =
  | Headers
  | ReadonlyMap<string, HeaderFieldValue>
  | { readonly [name: string]: HeaderFieldValue };

// Header objects often arrive untyped (an error's `response.headers`), so values are checked, not trusted:
// a number (as in node:http's OutgoingHttpHeaders) is used as text, anything else that is not text ignored.
const textsOf = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : typeof value === 'number' ? [String(value)] : [];

function combine(values: unknown[]): string | undefined {
  const parts = values.flatMap((v) => (Array.isArray(v) ? (v as unknown[]).flatMap(textsOf) : textsOf(v)));
  // RFC 9110 §5.3: repeated field lines are one list, joined with a comma, as Headers#get does.
  return parts.length === 0 ? undefined : parts.join(', ');
}

/**
 * The value of header `name` (any case), or `undefined` when absent. Repeated fields (array values, or
 * keys differing only in case) are joined with `", "` as `Headers#get` joins them.
 *
 * @param headers - the headers; `undefined` gives `undefined`
 * @param name - the field name, e.g. `'Retry-After'`
 * @example
 * ```ts
 * headerValue({ 'retry-after': '5' }, 'Retry-After'); // '5'
 * headerValue(new Headers({ 'Retry-After': '5' }), 'retry-after'); // '5'
 * ```
 */
export function headerValue(headers: HeadersLike | undefined, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const wanted = name.toLowerCase();
  if (headers instanceof Map) {
    const matches: unknown[] = [];
    for (const [key, value] of headers as ReadonlyMap<unknown, unknown>) {
      if (typeof key === 'string' && key.toLowerCase() === wanted) matches.push(value);
    }
    return combine(matches);
  }
  if (typeof (headers as { get?: unknown }).get === 'function') {
    // A WHATWG Headers (of any realm) or a look-alike such as AxiosHeaders: get() is case-insensitive.
    const value: unknown = (headers as Headers).get(name);
    return combine([value]);
  }
  const record = headers as { readonly [name: string]: HeaderFieldValue };
  // Own keys only: a header named "constructor" must not find Object.prototype.constructor. One pass that builds no
  // arrays: the service reads `Retry-After` this way from every 429 and 503 it is answered, twice.
  let found: string | undefined;
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== wanted) continue;
    const value: unknown = record[key];
    if (Array.isArray(value)) for (const item of value as unknown[]) found = joined(found, item);
    else found = joined(found, value);
  }
  return found;
}

/** `sofar` with one more field value (text or a number; anything else ignored), as {@link combine} joins them. */
function joined(sofar: string | undefined, value: unknown): string | undefined {
  const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
  if (text === undefined) return sofar;
  return sofar === undefined ? text : `${sofar}, ${text}`;
}
