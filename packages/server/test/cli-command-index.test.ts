import { Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandOfArgs } from '../src/cli/command-index.js';
import { runCli } from './service-harness.js';

// `retryd` loads only the command it runs; the top-level help lists the others from the index, which must agree.
describe('the command index of retryd', () => {
  it.each(COMMANDS.map((entry) => [entry.name, entry] as const))('agrees with the %s command it loads', async (_, entry) => {
    const command = await entry.load();
    expect(command.name()).toBe(entry.name);
    expect(command.description()).toBe(entry.description);
    expect(new Help().subcommandTerm(command)).toBe(entry.term);
  });

  it('picks the command a command line names, help <command> too', () => {
    expect(commandOfArgs(['tasks', 'list', '--all'])?.name).toBe('tasks');
    expect(commandOfArgs(['help', 'serve'])?.name).toBe('serve');
    expect(commandOfArgs(['--help'])).toBeUndefined();
    expect(commandOfArgs(['sevre'])).toBeUndefined();
  });

  it('lists every command in the help, shows a command help, and refuses an unknown command with exit code 2', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const entry of COMMANDS) expect(help.stdout).toMatch(new RegExp(`^  ${entry.term.replace(/[[\]]/g, '\\$&')}\\s`, 'm'));
    const serve = await runCli(['help', 'serve']);
    expect(serve.code).toBe(0);
    expect(serve.stdout).toContain('--allowed-hosts');
    const wrong = await runCli(['sevre']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("unknown command 'sevre'");
  });
});
