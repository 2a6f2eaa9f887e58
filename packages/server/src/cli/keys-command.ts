import { Command } from 'commander';
import { apiKeyCommands } from './api-key-commands.js';

/** `retryd keys`: API keys (create, list, revoke), run against the store by an operator. */
export function keysCommand(): Command {
  const keys = new Command('keys').description('Manage API keys (and the encryption of stored secrets) directly in the store');
  for (const command of apiKeyCommands()) keys.addCommand(command);
  return keys;
}
