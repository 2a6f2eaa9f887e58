import { Command } from 'commander';
import { apiKeyCommands } from './api-key-commands.js';
import { rotateEncryptionCommand } from './keys-rotate-encryption.js';

/**
 * `retryd keys`: the operator's commands on retryd's keys, run against the store (not through the API; the service
 * need not be running): API keys (create, list, revoke, and the hash of one for the bootstrap variable) and the re-encryption of stored secrets under a new key.
 */
export function keysCommand(): Command {
  const keys = new Command('keys').description('Manage API keys (create, list, revoke; hash one for RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256) and re-encrypt stored secrets under a new encryption key, directly in the store; the service need not be running');
  for (const command of apiKeyCommands()) keys.addCommand(command);
  return keys.addCommand(rotateEncryptionCommand()).exitOverride();
}
