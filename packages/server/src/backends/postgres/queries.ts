import { readFile } from 'node:fs/promises';
import { expandMacros } from './query-macros.js';

/** The statement files beside this module (copied into `dist` by `scripts/copy-assets.mjs`). */
const QUERIES_DIR = new URL('./queries/', import.meta.url);

/** Every statement of the PostgreSQL store: `queries/<name>.sql`. */
export const QUERY_NAMES = [
  'ping',
  'insert-tasks',
  'flush-wal',
  'add-target-queues',
  'select-tasks-by-keys',
  'get-task',
  'get-task-by-key',
  'list-tasks-by-status',
  'cancel-task',
  'request-cancel',
  'replay-task',
  'reschedule-task',
  'purge-expired',
  'delete-finished-tasks',
  'list-owed-callbacks',
  'settle-callbacks',
  'walk-sealed-tasks',
  'reseal-task',
  'claim-due',
  'next-due-at',
  'find-expired-leases',
  'next-lease-expiry-at',
  'complete-attempts',
  'extend-lease',
  'release-leases',
  'hold-target',
  'release-target',
  'limit-target',
  'list-targets',
  'list-attempts',
  'insert-policy',
  'replace-policy',
  'get-policy',
  'list-policies',
  'get-target-state',
  'insert-target-state',
  'update-target-state',
  'insert-api-key',
  'get-api-key',
  'list-api-keys-of-tenant',
  'list-api-keys',
  'revoke-api-key',
  'has-active-api-key',
  'get-tenant-limits',
  'put-tenant-limits',
  'delete-tenant-limits',
  'count-by-status',
  'count-by-status-of-tenant',
  'queue-tenants',
  'oldest-pending-page',
  'put-blob',
  'get-blob',
  'delete-blob',
] as const;

/** The name of one statement file. */
export type QueryName = (typeof QUERY_NAMES)[number];

/**
 * One statement: `name` is also its prepared-statement name, so each connection parses and plans it once and
 * later calls send only the parameters.
 */
export interface Query {
  readonly name: string;
  readonly text: string;
}

/** Every statement, by file name. */
export type Queries = Readonly<Record<QueryName, Query>>;

let cached: Promise<Queries> | undefined;

/**
 * Reads every statement file once per process (later calls share the first read) and expands its macros (the task
 * column lists and statuses, see `query-macros.ts`). Each file must open with its contract header:
 * `-- <name>: <what it does>`, then `-- args:`, `-- results:` and `-- errors:` lines.
 *
 * @throws Error naming the file whose header is missing or malformed, or whose macro is unknown (a packaging or
 *   editing mistake)
 */
export function loadQueries(): Promise<Queries> {
  cached ??= readQueries().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

async function readQueries(): Promise<Queries> {
  const entries = await Promise.all(
    QUERY_NAMES.map(async (name): Promise<[QueryName, Query]> => {
      const text = await readFile(new URL(`${name}.sql`, QUERIES_DIR), 'utf8');
      checkContract(name, text);
      return [name, { name: `retryd:${name}`, text: expandMacros(`queries/${name}.sql`, text) }];
    }),
  );
  return Object.fromEntries(entries) as Record<QueryName, Query>;
}

function checkContract(name: string, text: string): void {
  const header = text.split('\n').filter((line) => line.startsWith('--'));
  const has = (prefix: string) => header.some((line) => line.startsWith(prefix));
  if (!header[0]?.startsWith(`-- ${name}: `) || !has('-- args:') || !has('-- results:') || !has('-- errors:')) {
    throw new Error(
      `queries/${name}.sql lacks its contract header: it must open with \`-- ${name}: ...\` and have ` +
        '`-- args:`, `-- results:` and `-- errors:` lines.',
    );
  }
}
