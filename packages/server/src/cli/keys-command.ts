import { Command } from 'commander';
import { rotateEncryptionCommand } from './keys-rotate-encryption.js';

/** `retryd keys`: the operator's commands on retryd's keys. Today `rotate-encryption`. */
export function keysCommand(): Command {
  return new Command('keys')
    .description("Manage retryd's keys: re-encrypt stored secrets under a new encryption key.")
    .addCommand(rotateEncryptionCommand())
    .exitOverride();
}
