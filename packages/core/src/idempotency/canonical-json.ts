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

/**
 * Where the writer is: the keys and indexes from the top, kept as a stack and turned into a path (`$.items[2]`) only
 * when an error names it. Building the path of every member as it goes cost more than the rest of the writing.
 */
type Trail = (string | number)[];

function pathOf(trail: Trail): string {
  return trail.reduce<string>((path, key) => (typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`), '$');
}

/**
 * Writes a value already passed through {@link resolve}. `ancestors` are the objects being written around it (a few
 * levels deep in practice, so an array's `includes` beats a set's bookkeeping).
 */
function write(value: unknown, trail: Trail, ancestors: object[]): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      // JSON has no NaN or Infinity; like JSON.stringify they become null (and -0 becomes 0, as String gives it).
      return Number.isFinite(value) ? String(value) : 'null';
    case 'object':
      break;
    case 'undefined':
      throw unsupported('undefined', pathOf(trail));
    default:
      throw unsupported(`a ${typeof value}`, pathOf(trail));
  }
  const object = value as object;
  if (ancestors.includes(object)) throw new TypeError(`canonicalJson cannot represent a circular reference at ${pathOf(trail)}`);
  ancestors.push(object);
  let text: string;
  if (Array.isArray(object)) {
    text = '[';
    for (let i = 0; i < object.length; i++) {
      const item = resolve(object[i], String(i));
      trail.push(i);
      text += (i === 0 ? '' : ',') + (isSkipped(item) ? 'null' : write(item, trail, ancestors));
      trail.pop();
    }
    text += ']';
  } else {
    if (!isPlainObject(object)) throw unsupported(describe(object), pathOf(trail));
    const record = object as Record<string, unknown>;
    text = '{';
    // Sorted by UTF-16 code units, as RFC 8785 (JSON Canonicalization Scheme) does, so any producer agrees.
    for (const name of Object.keys(record).sort()) {
      const member = resolve(record[name], name);
      if (isSkipped(member)) continue;
      trail.push(name);
      text += (text.length === 1 ? '' : ',') + JSON.stringify(name) + ':' + write(member, trail, ancestors);
      trail.pop();
    }
    text += '}';
  }
  // Only ancestors count: the same object twice side by side is repetition, not a cycle.
  ancestors.pop();
  return text;
}

/** Thrown by {@link writePlain} for anything but plain data: the careful writer then takes the value from the top. */
const NOT_PLAIN: unique symbol = Symbol('not plain data');

/**
 * Deeper than this, {@link writePlain} hands over to the careful writer, whose ancestor list tells a cycle (which would
 * otherwise recurse until the stack overflows) from a deep but finite value.
 */
const PLAIN_DEPTH = 100;

/** Whether a member is left out of an object (written `null` in an array) or has a `toJSON()` to call first. */
function needsCare(value: unknown): boolean {
  if (typeof value === 'object') return value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function';
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/**
 * A member name as JSON writes it: quoted as it is unless it holds a character JSON escapes (a quote, a backslash, a
 * control character) or a surrogate (a lone one is escaped), which go through `JSON.stringify`. Names are short and
 * almost never need it, and the check costs less than the call.
 */
function quoteName(name: string): string {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(name);
  }
  return `"${name}"`;
}

/**
 * `names` sorted in place by UTF-16 code units (the order of `Array.prototype.sort` without a comparator; names of one
 * object are distinct, so stability does not matter). A few names, the common case, by insertion: `sort` cost four
 * times as much and allocated a kilobyte for each object, which with the request hash of every enqueued task was a
 * fifth of the enqueue's garbage.
 */
function sortedNames(names: string[]): string[] {
  if (names.length > 16) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const name = names[i] as string;
    let j = i - 1;
    while (j >= 0 && (names[j] as string) > name) {
      names[j + 1] = names[j] as string;
      j--;
    }
    names[j + 1] = name;
  }
  return names;
}

/**
 * The common case, as `JSON.parse` and literals make it (plain objects, arrays, strings, finite numbers, booleans,
 * null, no `toJSON`, no undefined member): the same text as {@link write}, without its path and ancestor bookkeeping,
 * which cost as much as the writing. Anything else throws {@link NOT_PLAIN} and the careful writer starts over, so
 * the text and the errors are {@link write}'s in every case.
 */
function writePlain(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (Number.isFinite(value)) return String(value);
      throw NOT_PLAIN;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      break;
    default:
      throw NOT_PLAIN;
  }
  if (depth > PLAIN_DEPTH) throw NOT_PLAIN;
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (needsCare(item)) throw NOT_PLAIN;
      text += (i === 0 ? '' : ',') + writePlain(item, depth + 1);
    }
    return text + ']';
  }
  // Its `toJSON` was looked for by the caller ({@link needsCare}, on every member and on the top value).
  if (!isPlainObject(value)) throw NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const names = sortedNames(Object.keys(record));
  let text = '{';
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const member = record[name];
    if (needsCare(member)) throw NOT_PLAIN;
    text += (i === 0 ? '' : ',') + quoteName(name) + ':' + writePlain(member, depth + 1);
  }
  return text + '}';
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
  try {
    if (!needsCare(value)) return writePlain(value, 0);
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
  }
  return write(resolve(value, ''), [], []);
}
