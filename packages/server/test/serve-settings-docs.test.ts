import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serveCommand } from '../src/cli/serve-command.js';
import { settingEntries } from '../src/service/serve-settings.js';
import { SETTINGS_TABLE_BEGIN, SETTINGS_TABLE_END, settingsTableMarkdown } from '../src/service/serve-settings-docs.js';

const DOCS = join(import.meta.dirname, '..', '..', '..', 'docs', 'server.md');

/** docs/server.md with its table of settings replaced by `table`. */
function withTable(docs: string, table: string): string {
  const begin = docs.indexOf(SETTINGS_TABLE_BEGIN);
  const end = docs.indexOf(SETTINGS_TABLE_END);
  if (begin < 0 || end < begin) throw new Error(`docs/server.md must hold the table of settings between ${SETTINGS_TABLE_BEGIN} and ${SETTINGS_TABLE_END}`);
  return `${docs.slice(0, begin)}${SETTINGS_TABLE_BEGIN}\n\n${table}\n\n${docs.slice(end)}`;
}

describe('the settings of retryd serve', () => {
  it('are the table of docs/server.md (RETRYD_WRITE_DOCS=1 rewrites it)', () => {
    const docs = readFileSync(DOCS, 'utf8');
    const generated = withTable(docs, settingsTableMarkdown());
    if (process.env.RETRYD_WRITE_DOCS === '1') writeFileSync(DOCS, generated);
    expect(readFileSync(DOCS, 'utf8'), 'run RETRYD_WRITE_DOCS=1 npx vitest run packages/server/test/serve-settings-docs.test.ts').toBe(generated);
  });

  it('are every option of the command, each with its environment variable, in the same order', () => {
    const options = serveCommand().options.map((option) => [option.long, option.envVar]);
    const settings = settingEntries().flatMap(([, setting]) => (setting.flag === undefined ? [] : [[setting.flag.split(' ')[0], setting.env]]));
    expect(options).toEqual(settings);
  });

  it('are every variable the table lists, each once', () => {
    const table = settingsTableMarkdown();
    for (const [, setting] of settingEntries()) expect(table.split(`\`${setting.env}\``)).toHaveLength(2);
  });
});
