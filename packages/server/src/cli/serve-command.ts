import { Command, Option } from 'commander';
import { BlobsUrlError } from '../blobs/s3-blobs-url.js';
import { InvalidAllowListError } from '../security/target-guard.js';
import { EncryptionKeyError } from '../secrets/encryption-keys.js';
import { SecretsFileError } from '../secrets/secret-provider.js';
import { StoreUrlError } from '../service/open-store.js';
import { createLogger } from '../service/logger.js';
import { ConfigError, configOfSettings, type RetrydConfig } from '../service/retryd-config.js';
import { settingEntries, type ServeSettingValues, type SettingName } from '../service/serve-settings.js';

/** `retryd serve`: the HTTP API and the workers in one process. */
export function serveCommand(): Command {
  const options = settingOptions();
  const command = new Command('serve').description('Run the retryd service: the HTTP API and the workers in one process, or one of them (--role).');
  for (const option of options.values()) command.addOption(option);
  return command
    .addHelpText('after', environmentOnlyHelp())
    .action(async (flags: Record<string, unknown>) => {
      const config = configFromFlags(flags, options);
      const logger = createLogger(config.logLevel);
      let service;
      try {
        // Loaded when the service starts, not for `retryd serve --help`: the engine, fastify and the API take a while.
        const { startRetryd } = await import('../service/start-retryd.js');
        service = await startRetryd(config, logger);
      } catch (error) {
        if (isUsageError(error)) {
          console.error(`retryd: ${error.message}`);
          process.exitCode = 2;
          return;
        }
        logger.fatal({ event: 'start_failed', err: error }, error instanceof Error ? error.message : String(error));
        process.exitCode = 1;
        return;
      }
      let signals = 0;
      const shutdown = (signal: NodeJS.Signals) => {
        signals += 1;
        if (signals > 1) {
          logger.warn({ event: 'forced_stop', signal }, 'second signal: exiting without waiting');
          process.exit(1);
        }
        logger.info({ event: 'stopping', signal }, 'stopping: finishing in-flight calls');
        service.close().then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ event: 'stop_failed', err: error }, 'stop failed');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', shutdown);
      process.on('SIGINT', shutdown);
    });
}

/** The commander option of every setting that has a flag, by the setting's name, in `--help` order. */
function settingOptions(): Map<SettingName, Option> {
  const options = new Map<SettingName, Option>();
  for (const [name, setting] of settingEntries()) {
    if (setting.flag === undefined) continue;
    const option = new Option(setting.flag, setting.help).env(setting.env);
    if (setting.choices !== undefined) option.choices(setting.choices as readonly string[]);
    // A `null` default means none: commander would print it as "(default: null)".
    if (setting.default !== undefined && setting.default !== null && setting.helpDefault !== false) option.default(setting.default, setting.helpDefault);
    if (setting.parse !== undefined) option.argParser(setting.parse(option.long ?? setting.flag));
    options.set(name, option);
  }
  return options;
}

/** The lines `--help` ends with: the settings that are environment variables only. */
function environmentOnlyHelp(): string {
  const lines = settingEntries()
    .filter(([, setting]) => setting.flag === undefined)
    .flatMap(([, setting]) => setting.help.split('\n').map((line, i) => (i === 0 ? `  ${setting.env.padEnd(26)}  ${line}` : `${' '.repeat(30)}${line}`)));
  return ['', 'Environment variables only (a flag would show in the process list):', ...lines].join('\n');
}

/**
 * The config of the parsed flags (commander has read each flag's variable when the flag is not given) and of the
 * variables that are never flags, each setting at its default when it is not given.
 */
function configFromFlags(flags: Record<string, unknown>, options: Map<SettingName, Option>): RetrydConfig {
  const values: Record<string, unknown> = {};
  for (const [name, setting] of settingEntries()) {
    const option = options.get(name);
    const value = option === undefined ? process.env[setting.env] : flags[option.attributeName()];
    const chosen = value ?? setting.default;
    if (chosen !== undefined) values[name] = chosen;
  }
  // Each value is its setting's parsed type: commander ran the setting's own parser or choices on it.
  return configOfSettings(values as ServeSettingValues);
}

/** Errors that mean the operator's flags are wrong: told in one line, exit code 2, no stack. */
export function isUsageError(error: unknown): error is Error {
  return (
    error instanceof ConfigError ||
    error instanceof InvalidAllowListError ||
    error instanceof StoreUrlError ||
    error instanceof BlobsUrlError ||
    error instanceof EncryptionKeyError ||
    error instanceof SecretsFileError
  );
}
