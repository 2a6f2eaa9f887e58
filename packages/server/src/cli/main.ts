#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { keysCommand } from './keys-command.js';
import { migrateCommand } from './migrate-command.js';
import { isUsageError, serveCommand } from './serve-command.js';
import { simulateCommand } from './simulate-command.js';
import { tenantsCommand } from './tenants-command.js';
import { tasksCommand } from './tasks-command.js';
import { dlqCommand } from './dlq-command.js';
import { policiesCommand } from './policies-command.js';
import { targetsCommand } from './targets-command.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('retryd')
  .description('retryd: a durable service that retries HTTP calls with the same Idempotency-Key on every attempt.')
  .version(pkg.version)
  .addCommand(serveCommand())
  .addCommand(migrateCommand())
  .addCommand(keysCommand())
  .addCommand(tenantsCommand())
  .addCommand(tasksCommand())
  .addCommand(dlqCommand())
  .addCommand(policiesCommand())
  .addCommand(targetsCommand())
  .addCommand(simulateCommand())
  .exitOverride();

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
  } else if (isUsageError(error)) {
    console.error(`retryd: ${error.message}`);
    process.exitCode = 2;
  } else {
    throw error;
  }
}
