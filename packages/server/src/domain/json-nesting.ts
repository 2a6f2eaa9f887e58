/**
 * How deep JSON may nest, and the checks that keep deeper input out. Code that walks a JSON value recursively (the
 * canonical JSON of idempotency fingerprints, `JSON.stringify`, validators) overflows the stack somewhere between a
 * thousand and ten thousand levels, which a 10 MiB request body easily holds; the limits below keep every such walk
 * thousands of frames away from that.
 *
 * Depth counts objects and arrays: `1` and `"x"` are 0 deep, `{}` and `[1]` are 1 deep, `{"a":[1]}` is 2 deep.
 */

/** Deepest nesting of a whole JSON request body (the request's own object is level 1): 100. */
export const MAX_REQUEST_DEPTH = 100;

/** Deepest nesting of a JSON value that a task carries as its `body`: 64. Within {@link MAX_REQUEST_DEPTH} even in a batch. */
export const MAX_VALUE_DEPTH = 64;

/** Segments of a JSON path: member names and array indexes. */
export type JsonPath = (string | number)[];

interface Frame {
  readonly array: boolean;
  /** Next array index, or -1 in an object. */
  index: number;
  /** Where the current member name's JSON string starts and ends (an object's), -1 before the first. */
  keyStart: number;
  keyEnd: number;
  expectingKey: boolean;
}

/** The member name a frame is at, decoded (a name that is not valid JSON is shown as written). */
function keyOf(text: string, frame: Frame): string {
  const raw = text.slice(frame.keyStart, frame.keyEnd);
  try {
    return String(JSON.parse(raw));
  } catch {
    return raw.slice(1, -1);
  }
}

/**
 * Scans JSON text, without parsing it, for an object or array nested more than `maxDepth` levels deep, and returns
 * the path to the first one (its parents' member names and indexes), or undefined when there is none. Linear in the
 * text and allocation-free until it finds one, so it runs before `JSON.parse` builds millions of nested arrays.
 * Text that is not JSON is scanned as far as it goes; the parser refuses it afterwards.
 *
 * @example
 * ```ts
 * findTooDeep('{"a":[[1]]}', 2); // ['a', 0]
 * findTooDeep('{"a":[1]}', 2);   // undefined
 * ```
 */
export function findTooDeep(text: string, maxDepth: number): JsonPath | undefined {
  return nestsTooDeep(text, maxDepth) ? pathTooDeep(text, maxDepth) : undefined;
}

/**
 * Whether JSON text nests more than `maxDepth` levels: the depth alone, strings skipped by `indexOf` (a native
 * search) rather than character by character. The common answer, no, without building the path's frames.
 */
function nestsTooDeep(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // To the closing quote: one that an odd run of backslashes escapes does not close the string.
      for (;;) {
        const end = text.indexOf('"', i + 1);
        if (end === -1) return false;
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c /* \ */) slashes++;
        i = end;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return true;
    } else if ((c === 0x7d /* } */ || c === 0x5d /* ] */) && depth > 0) {
      // Never below the top, as the path's frames never pop an empty stack: text that closes first is no shallower.
      depth--;
    }
  }
  return false;
}

/** The path to the first object or array nested more than `maxDepth` levels deep (see {@link findTooDeep}). */
function pathTooDeep(text: string, maxDepth: number): JsonPath | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
      const top = stack[stack.length - 1];
      if (top !== undefined && !top.array && top.expectingKey) {
        top.keyStart = start;
        top.keyEnd = i + 1;
        top.expectingKey = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= maxDepth) {
        return stack.map((frame) => (frame.array ? frame.index : keyOf(text, frame)));
      }
      const array = c === 0x5b;
      stack.push({ array, index: 0, keyStart: -1, keyEnd: -1, expectingKey: !array });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.array === true) top.index++;
      else if (top !== undefined) top.expectingKey = true;
    }
  }
  return undefined;
}

/**
 * Whether a parsed value nests more than `maxDepth` levels deep. Iterative and stops at the first value too deep, so
 * a value of any depth (one built in code rather than parsed from a bounded request) is safe to check.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > maxDepth) return true;
    const children = Array.isArray(next.value) ? (next.value as unknown[]) : Object.values(next.value);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) pending.push({ value: child, depth });
    }
  }
  return false;
}

/** A path as the API names fields: `['tasks', 3, 'body']` → `tasks[3].body`. */
export function fieldOfPath(path: JsonPath): string {
  return path.reduce<string>(
    (field, part) => (typeof part === 'number' ? `${field}[${part}]` : field === '' ? part : `${field}.${part}`),
    '',
  );
}
