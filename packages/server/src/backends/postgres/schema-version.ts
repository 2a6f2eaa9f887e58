import { CallerTransactionError } from './caller-transaction-error.js';
import type { CallerTransaction } from './caller-transaction.js';
import type { Migration } from './migrate.js';

/** What to run to migrate `schema`, for the messages. */
const migrateCommand = (schema: string) => `retryd migrate --store 'postgres://…?schema=${schema}'`;

/**
 * Checks, inside `scope`, that retryd's `schema` holds exactly the migrations of `known` (this build's): a writer that
 * knows fewer would insert rows a newer service reads otherwise than it expects, and one that knows more would write
 * columns that are not there. A writer does not migrate: that is for the service (`retryd serve`) or `retryd migrate`,
 * under their lock.
 *
 * @throws CallerTransactionError SCHEMA_NOT_MIGRATED (no such schema, never migrated, or missing some of `known`) or
 *   SCHEMA_TOO_NEW (a version this build does not know), naming both versions and what to do
 */
export async function checkSchemaVersion(scope: CallerTransaction, schema: string, known: readonly Migration[]): Promise<void> {
  const latest = Math.max(...known.map((m) => m.version));
  let recorded: Set<number>;
  try {
    const { rows } = await scope.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`);
    recorded = new Set(rows.map((row) => row.version));
  } catch (error) {
    // 42P01: no schema_migrations (or no schema at all): retryd never ran on it.
    if ((error as { code?: unknown }).code !== '42P01' && (error as { code?: unknown }).code !== '3F000') throw error;
    throw new CallerTransactionError(
      'SCHEMA_NOT_MIGRATED',
      `retryd's schema "${schema}" does not exist or was never migrated (no ${schema}.schema_migrations): run \`${migrateCommand(schema)}\` ` +
        `(or start \`retryd serve\` on it) once, with the retryd version of this application's @retryd/server, which writes schema version ${latest}`,
      { cause: error },
    );
  }
  const current = recorded.size === 0 ? 0 : Math.max(...recorded);
  const unknown = [...recorded].filter((v) => v > latest);
  if (unknown.length > 0) {
    throw new CallerTransactionError(
      'SCHEMA_TOO_NEW',
      `retryd's schema "${schema}" is at version ${current}, migrated by a newer retryd; this @retryd/server knows versions up to ${latest} ` +
        "and would write tasks that version may not read as it expects: upgrade @retryd/server in this application to the service's version",
    );
  }
  const missing = known.filter((m) => !recorded.has(m.version)).map((m) => m.version);
  if (missing.length > 0) {
    throw new CallerTransactionError(
      'SCHEMA_NOT_MIGRATED',
      `retryd's schema "${schema}" is at version ${current}, and this @retryd/server writes version ${latest} (missing ${missing.join(', ')}): ` +
        `run \`${migrateCommand(schema)}\` (or start \`retryd serve\` of this version on it) once`,
    );
  }
}
