import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { DEFAULT_SERVICE_URL, RetrydApiError, RetrydClient, RetrydUnreachableError, type Page, type PageRequest } from '@retryd/client';
import { ConfigError, parseIntegerOption } from '../service/retryd-config.js';
import { relativeTime } from '../terminal/relative-time.js';

/**
 * The exit codes of the commands that talk to a running service (`tasks`, `dlq`, `policies`, `targets`), one per
 * thing a script can act on. `retryd serve`, `keys` and `tenants` use 0, 1 and 2 the same way.
 */
export const EXIT_CODES = Object.freeze({
  /** Done. */
  OK: 0,
  /** The service could not do it: unreachable, a 5xx, 429 (after retrying reads), or any answer not listed below. */
  SERVICE: 1,
  /** Wrong usage: a bad flag or argument, an unreadable or invalid file, or a 400 (the problem names the field). */
  USAGE: 2,
  /** 404: no such task, policy or target (or one of another tenant). */
  NOT_FOUND: 3,
  /** 409 or 422: the thing is not in a state that allows it (a finished task cancelled, a succeeded task replayed). */
  CONFLICT: 4,
  /** 401 or 403: no valid API key, or one whose scope does not allow it. */
  UNAUTHORIZED: 5,
} as const);

/** The exit code of an HTTP status the service answered (see {@link EXIT_CODES}). */
export function exitCodeOfStatus(status: number): number {
  if (status === 401 || status === 403) return EXIT_CODES.UNAUTHORIZED;
  if (status === 404) return EXIT_CODES.NOT_FOUND;
  if (status === 409 || status === 422) return EXIT_CODES.CONFLICT;
  if ([400, 405, 413, 414, 415, 431].includes(status)) return EXIT_CODES.USAGE;
  return EXIT_CODES.SERVICE;
}

/** The operator gave something unusable (a file that is not JSON, a flag out of range): exit code 2. */
export class UsageError extends ConfigError {}

/** The flags every API command has. */
export interface ApiFlags {
  url: string;
  apiKey?: string;
  json?: boolean;
  absolute?: boolean;
}

/** Adds `--url`, `--api-key` and `--json` to an API command. */
export function apiCommand(name: string, description: string, jsonMeaning = 'one JSON document instead of text'): Command {
  return new Command(name)
    .description(description)
    .addOption(new Option('--url <url>', 'the running service').env('RETRYD_URL').default(DEFAULT_SERVICE_URL))
    .addOption(new Option('--api-key <key>', 'an API key (rtd_…), sent as Authorization: Bearer; prefer the environment variable, which the process list does not show').env('RETRYD_API_KEY'))
    .option('--json', jsonMeaning)
    .option('--absolute', ABSOLUTE_FLAG_MEANING);
}

/** What `--absolute` means, for every command with a table of times. */
export const ABSOLUTE_FLAG_MEANING = 'times in tables as ISO 8601 (UTC) instead of relative to now ("3 s ago", "in 2 min")';

/** How a table shows a time (`-` for none). */
export type TimeText = (ms: number | null | undefined) => string;

/** Times relative to `now` (`3 s ago`, `in 2 min`), or ISO 8601 with `--absolute`. */
export function timeTextOf(flags: { absolute?: boolean }, now: number = Date.now()): TimeText {
  if (flags.absolute === true) return iso;
  return (ms) => (ms === null || ms === undefined ? '-' : relativeTime(ms, now));
}

/** The flags of a listing. */
export interface ListFlags extends ApiFlags {
  limit: number;
  cursor?: string;
  all?: boolean;
}

/** Adds `--limit`, `--cursor` and `--all` to a listing. */
export function listCommand(name: string, description: string): Command {
  return apiCommand(name, description, 'one JSON object per line (NDJSON) instead of a table')
    .addOption(new Option('--limit <n>', 'how many to show (with --all: the page size)').default(50).argParser((v) => parseIntegerOption('--limit', v, 1, 1000)))
    .addOption(new Option('--cursor <cursor>', 'start at this page (the nextCursor a previous listing printed)'))
    .option('--all', 'every page, following nextCursor to the end');
}

/**
 * Runs `work` with a client of the service the flags name. An error is told in one line on stderr (or a few: one
 * per field of a 400), never with a stack, and sets the exit code of {@link EXIT_CODES}.
 */
export async function withClient(flags: ApiFlags, work: (client: RetrydClient) => Promise<void>): Promise<void> {
  const apiKey = flags.apiKey === undefined || flags.apiKey === '' ? undefined : flags.apiKey;
  let client: RetrydClient;
  try {
    client = new RetrydClient({ url: checkedUrl(flags.url), apiKey });
    await work(client);
  } catch (error) {
    process.exitCode = reportError(error);
  }
}

/** Prints a failure in one line (and one per field error) and answers its exit code; an unknown error is rethrown. */
export function reportError(error: unknown): number {
  if (error instanceof RetrydApiError) {
    console.error(`retryd: ${error.problem.detail} (${error.status} ${error.problem.code})`);
    const fieldErrors = error.problem.errors ?? [];
    // The detail already is the message when there is one field error.
    if (fieldErrors.length > 1 || (fieldErrors.length === 1 && fieldErrors[0]?.message !== error.problem.detail)) {
      for (const fieldError of fieldErrors) console.error(`  ${fieldError.message}`);
    }
    return exitCodeOfStatus(error.status);
  }
  if (error instanceof RetrydUnreachableError) {
    console.error(`retryd: ${error.message}`);
    return EXIT_CODES.SERVICE;
  }
  if (error instanceof ConfigError) {
    console.error(`retryd: ${error.message}`);
    return EXIT_CODES.USAGE;
  }
  throw error;
}

function checkedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  if (parsed.username !== '' || parsed.password !== '') throw new UsageError('--url must not hold credentials: give the API key with --api-key or RETRYD_API_KEY');
  return url;
}

/**
 * A listing's items: one page of `--limit` from `--cursor`, or with `--all` every page. Answers the cursor of the
 * next page when there is one and `--all` was not given.
 */
export async function listed<T>(client: RetrydClient, flags: ListFlags, listPage: (page: PageRequest) => Promise<Page<T>>): Promise<{ items: T[]; nextCursor?: string }> {
  if (flags.all !== true) {
    return listPage({ limit: flags.limit, ...(flags.cursor === undefined ? {} : { cursor: flags.cursor }) });
  }
  const items: T[] = [];
  let cursor = flags.cursor;
  do {
    const page = await listPage({ limit: flags.limit, ...(cursor === undefined ? {} : { cursor }) });
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { items };
}

/**
 * Prints a listing: NDJSON with `--json`, else a table (or a line saying there is none); the cursor of the next page
 * goes to stderr, so that stdout stays the items alone.
 */
export function printListing<T>(flags: ListFlags, listing: { items: T[]; nextCursor?: string }, what: string, table: (items: T[]) => string): void {
  if (flags.json === true) {
    for (const item of listing.items) console.log(JSON.stringify(item));
  } else if (listing.items.length === 0) {
    console.log(`no ${what}`);
  } else {
    console.log(table(listing.items));
  }
  if (listing.nextCursor !== undefined) console.error(`more: --cursor ${listing.nextCursor} for the next page, or --all`);
}

/** Prints one answer: JSON with `--json`, else its text. */
export function printOne(flags: ApiFlags, value: unknown, text: () => string): void {
  console.log(flags.json === true ? JSON.stringify(value, null, 2) : text());
}

/** A JSON object read from a file, or from stdin for `-`: anything else is a usage error naming the flag. */
export function readJsonObject(path: string, flag = '--file'): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new UsageError(`${flag}: cannot read ${path === '-' ? 'stdin' : path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag}: ${path === '-' ? 'stdin' : path} is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${flag}: ${path === '-' ? 'stdin' : path} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/** An epoch-ms time as ISO 8601, or `-`. */
export const iso = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '-' : new Date(ms).toISOString());

/** A duration for people: `850ms`, `12.3s`, `4m05s`, `2h10m`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
