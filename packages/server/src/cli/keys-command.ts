import { Command } from 'commander';
import { apiKeyCommands } from './api-key-commands.js';
import { rotateEncryptionCommand } from './keys-rotate-encryption.js';

/**
 * `retryd keys`: the operator's commands on retryd's keys, run against the store: API keys (create, list, revoke) and
 * the re-encryption of stored secrets under a new encryption key.
 */
export function keysCommand(): Command {
  const keys = new Command('keys').description('Manage API keys, and re-encrypt stored secrets under a new encryption key, directly in the store');
  for (const command of apiKeyCommands()) keys.addCommand(command);
  return keys.addCommand(rotateEncryptionCommand()).exitOverride();
}
