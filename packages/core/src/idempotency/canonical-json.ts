/**
 * Why a value cannot be canonicalised. Refusing is deliberate: `JSON.stringify` turns a `Map`, a `Set` or a
 * `Blob` into `{}`, so two different bodies would share one idempotency key and the second request would
 * be taken for a replay of the first.
 */
function unsupported(what: string, path: string): TypeError {
  return new TypeError(
    `canonicalJson cannot represent ${what} at ${path}: only plain objects, arrays, strings, numbers, ` +
      'booleans, null and objects with toJSON() are allowed',
  );
}

function describe(value: object): string {
  const name = Object.getPrototypeOf(value)?.constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a custom prototype';
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The value JSON.stringify would write for `value` under `key`: the result of its `toJSON()`, if any. */
function resolve(value: unknown, key: string): unknown {
  if (typeof value === 'object' && value !== null) {
    const toJson: unknown = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJson === 'function') return (toJson as (key: string) => unknown).call(value, key);
  }
  return value;
}

/** Whether JSON.stringify leaves this out of an object (and writes `null` for it in an array). */
const isSkipped = (value: unknown): boolean =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol';

/** Writes a value already passed through {@link resolve}. */
function write(value: unknown, path: string, ancestors: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      // JSON has no NaN or Infinity; like JSON.stringify they become null (and -0 becomes 0).
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'object':
      break;
    case 'undefined':
      throw unsupported('undefined', path);
    default:
      throw unsupported(`a ${typeof value}`, path);
  }
  const object = value as object;
  if (ancestors.has(object)) throw new TypeError(`canonicalJson cannot represent a circular reference at ${path}`);
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      const items = object.map((raw: unknown, i) => {
        const item = resolve(raw, String(i));
        return isSkipped(item) ? 'null' : write(item, `${path}[${i}]`, ancestors);
      });
      return `[${items.join(',')}]`;
    }
    if (!isPlainObject(object)) throw unsupported(describe(object), path);
    const record = object as Record<string, unknown>;
    const members: string[] = [];
    // Sorted by UTF-16 code units, as RFC 8785 (JSON Canonicalization Scheme) does, so any producer agrees.
    for (const name of Object.keys(record).sort()) {
      const member = resolve(record[name], name);
      if (!isSkipped(member)) members.push(`${JSON.stringify(name)}:${write(member, `${path}.${name}`, ancestors)}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    // Only ancestors count: the same object twice side by side is repetition, not a cycle.
    ancestors.delete(object);
  }
}

/**
 * `JSON.stringify` with the keys of every object sorted, so that equal data always gives the same text
 * whatever order its keys were written in. Otherwise it follows `JSON.stringify`: `toJSON()` is honoured
 * (a `Date` becomes its ISO string), `undefined`, functions and symbols are left out of objects and become
 * `null` in arrays, `NaN` and `±Infinity` become `null`, and there is no whitespace.
 *
 * Stricter than `JSON.stringify` where it would lose data silently: a `Map`, `Set`, class instance, typed
 * array or bigint, a circular reference, and a top-level `undefined`, function or symbol throw a `TypeError`
 * naming the path (`$.items[2]`).
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [true, { d: null, c: 'x' }] }); // '{"a":[true,{"c":"x","d":null}],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return write(resolve(value, ''), '$', new Set());
}
