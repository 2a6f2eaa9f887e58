import { TASK_FIELD_SPECS, type FieldSpec, type TaskFieldName } from './task-fields.js';

// The stores' row mappers (and the API's task view) are compiled once from the one definition of a task's fields (domain/task-fields.ts) into
// the function a hand-written mapper would be: one object literal in row order. Every task then has one shape
// whichever store made it (the engine's hot code stays monomorphic), and mapping costs no loop or per-field dispatch
// on the claim path. The source is built from the field definitions only, never from data.

/** What a field name or column must look like to be written into compiled source. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

for (const spec of TASK_FIELD_SPECS) {
  if (!IDENTIFIER.test(spec.name) || !IDENTIFIER.test(spec.column)) {
    throw new Error(`Task field ${JSON.stringify(spec.name)} (column ${JSON.stringify(spec.column)}) is not a plain identifier.`);
  }
}

/** A field with its name and its place in row order. */
export type PlacedField = FieldSpec & { readonly name: TaskFieldName; readonly index: number };

const PLACED: readonly PlacedField[] = TASK_FIELD_SPECS.map((spec, index) => ({ ...spec, index }));

/**
 * The source of an object literal with one property per task field (or per field `only` keeps), in row order,
 * each `valueOf(field)` (a JavaScript expression), e.g. `{ tenantId: r[0], … }`.
 */
export function taskLiteral(valueOf: (field: PlacedField) => string, only?: (field: PlacedField) => boolean): string {
  const fields = only === undefined ? PLACED : PLACED.filter(only);
  return `{\n${fields.map((field) => `    ${field.name}: ${valueOf(field)},`).join('\n')}\n  }`;
}

/**
 * Compiles `function <signature> { <body> }` once, with `scope`'s entries in its closure.
 *
 * @example
 * ```ts
 * const fromRow = compileTaskMapper<(r: unknown[]) => RetryTask>('fromRow(r)', `return ${taskLiteral((f) => `r[${f.index}]`)};`);
 * ```
 */
export function compileTaskMapper<F>(signature: string, body: string, scope: Readonly<Record<string, unknown>> = {}): F {
  const names = Object.keys(scope);
  const factory = new Function(...names, `'use strict';\nreturn function ${signature} {\n  ${body}\n};`) as (...values: unknown[]) => F;
  return factory(...names.map((name) => scope[name]));
}
