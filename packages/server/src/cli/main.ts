#!/usr/bin/env node
import './heap-tuning.js';
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { COMMANDS, commandOfArgs, commandStub } from './command-index.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

// Only the command this run names is loaded whole; the others are their names and descriptions, for the help.
const ran = commandOfArgs(process.argv.slice(2));
const terms = new Map(COMMANDS.map((entry) => [entry.name, entry.term]));
const program = new Command('retryd')
  .description('retryd: a durable service that retries HTTP calls with the same Idempotency-Key on every attempt.')
  .version(pkg.version)
  .configureHelp({ subcommandTerm: (command) => terms.get(command.name()) ?? command.name() })
  .exitOverride();
for (const entry of COMMANDS) program.addCommand(entry === ran ? await entry.load() : commandStub(entry));

/** Every command reports a wrong command line to the catch below (exit code 2) instead of exiting with 1 itself. */
function overrideExits(command: Command): void {
  for (const sub of command.commands) {
    sub.exitOverride();
    overrideExits(sub);
  }
}
overrideExits(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has printed its one line (or the help); any code but 0 means the command line was wrong.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    // Loaded only on this path: the errors it knows come with the modules `serve` loads.
    const { isUsageError } = await import('./serve-command.js');
    if (!isUsageError(error)) throw error;
    console.error(`retryd: ${error.message}`);
    process.exitCode = 2;
  }
}
