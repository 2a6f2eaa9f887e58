import { TASK_FIELD_SPECS, type FieldSpec, type TaskFieldName } from '../domain/task-fields.js';

// What the generated row mappers (see row-mapper-files.ts) are written from: one object literal per mapper, one
// property per task field in row order, each the expression a store's codec gives. Every task then has one shape
// whichever store made it (the engine's hot code stays monomorphic), and mapping costs no loop or per-field dispatch
// on the claim path. The source is written from the field definitions only, never from data.

/** What a field name or column must look like to be written into generated source. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

for (const spec of TASK_FIELD_SPECS) {
  if (!IDENTIFIER.test(spec.name) || !IDENTIFIER.test(spec.column)) {
    throw new Error(`Task field ${JSON.stringify(spec.name)} (column ${JSON.stringify(spec.column)}) is not a plain identifier.`);
  }
}

/** A field with its name and its place in row order. */
export type PlacedField = FieldSpec & { readonly name: TaskFieldName; readonly index: number };

/** Every task field with its place, in row order. */
export const PLACED_FIELDS: readonly PlacedField[] = TASK_FIELD_SPECS.map((spec, index) => ({ ...spec, index }));

/**
 * The source of an object literal with one property per task field (or per field `only` keeps), in row order,
 * each `valueOf(field)` (a TypeScript expression), e.g. `{ tenantId: r[0] as string, … }`, its closing brace
 * indented by `indent`.
 */
export function taskLiteral(valueOf: (field: PlacedField) => string, only?: (field: PlacedField) => boolean, indent = '  '): string {
  const fields = only === undefined ? PLACED_FIELDS : PLACED_FIELDS.filter(only);
  return `{\n${fields.map((field) => `${indent}  ${field.name}: ${valueOf(field)},`).join('\n')}\n${indent}}`;
}

/** A name or column (a plain identifier: see above) as a string literal. */
export function quoted(identifier: string): string {
  return `'${identifier}'`;
}

/** One generated module: its path under `src/` and its text. */
export interface GeneratedFile {
  readonly path: string;
  readonly source: string;
}

/** The first lines of every generated module. */
export const GENERATED_HEADER =
  '// Generated from the task fields (src/domain/task-fields.ts) by packages/server/scripts/generate-row-mappers.mjs.\n' +
  '// Do not edit: run `npm run generate:row-mappers -w packages/server` after changing a field or a codec.\n';

/** A generated module of `imports` (one line each) and `functions` (each an exported function's source). */
export function generatedModule(path: string, imports: readonly string[], functions: readonly string[]): GeneratedFile {
  return { path, source: `${GENERATED_HEADER}${imports.join('\n')}\n\n${functions.join('\n\n')}\n` };
}
