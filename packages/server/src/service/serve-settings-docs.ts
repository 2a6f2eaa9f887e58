import { settingEntries, type Setting } from './serve-settings.js';

/**
 * Variables the docs' table lists beside the settings, read elsewhere rather than into the config: by the secret
 * provider at every dispatch, by OpenTelemetry's exporter.
 */
export const OTHER_VARIABLES: readonly { readonly env: readonly string[]; readonly docs: string }[] = [
  {
    env: ['RETRYD_TENANT_SECRET_<TENANT>__<NAME>'],
    docs: "tenant `<TENANT>`'s `{{secret:NAME}}` (`RETRYD_TENANT_SECRET_acme__STRIPE_KEY`), read at enqueue (is it known?) and at every dispatch; a variable that reads as two tenants' stops the start",
  },
  { env: ['RETRYD_SECRET_<NAME>'], docs: "the `default` tenant's `{{secret:NAME}}` (a service with one tenant needs no other)" },
  { env: ['RETRYD_SHARED_SECRET_<NAME>'], docs: 'a `{{secret:NAME}}` every tenant may name, after its own' },
  { env: ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'], docs: 'send a span of every attempt over OTLP/HTTP to this collector ([traces](#traces))' },
];

/** The comment docs/server.md's table of settings begins with (the table follows it). */
export const SETTINGS_TABLE_BEGIN =
  '<!-- The table of settings is generated from packages/server/src/service/serve-settings.ts: RETRYD_WRITE_DOCS=1 npx vitest run packages/server/test/serve-settings-docs.test.ts -->';

/** The comment docs/server.md's table of settings ends with. */
export const SETTINGS_TABLE_END = '<!-- end of the table of settings -->';

/** The markdown table of every setting of `retryd serve` and of the other variables it reads, as docs/server.md has it. */
export function settingsTableMarkdown(): string {
  const rows = settingEntries().map(([, setting]) => row(setting.flag === undefined ? '—' : code(flagName(setting.flag)), code(setting.env), docsDefault(setting), setting.docs));
  for (const variable of OTHER_VARIABLES) rows.push(row('—', variable.env.map(code).join(', '), 'none', variable.docs));
  return ['| flag | environment | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

function row(...cells: string[]): string {
  return `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
}

function code(text: string): string {
  return `\`${text}\``;
}

/** `--port` of `--port <port>`. */
function flagName(flag: string): string {
  return flag.split(' ')[0] ?? flag;
}

/** A number as it is, a word in backticks, none otherwise (an empty list, `null`, no default). */
function docsDefault(setting: Setting<unknown>): string {
  if (setting.docsDefault !== undefined) return setting.docsDefault;
  if (typeof setting.default === 'number') return String(setting.default);
  if (typeof setting.default === 'string') return code(setting.default);
  return 'none';
}
