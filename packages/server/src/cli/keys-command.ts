import { Command } from 'commander';
import { apiKeyCommands } from './api-key-commands.js';

/** `retryd keys`: API keys (create, list, revoke), run against the store by an operator (not through the API). */
export function keysCommand(): Command {
  const keys = new Command('keys').description('Manage API keys (create, list, revoke) directly in the store; the service need not be running');
  for (const command of apiKeyCommands()) keys.addCommand(command);
  return keys;
}
