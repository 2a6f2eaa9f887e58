import pino, { type Logger } from 'pino';

/**
 * The service's structured JSON logger. Target headers and bodies may hold credentials (Authorization, API keys,
 * card data), so they are never logged: the paths below are redacted wherever a task or request is logged.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'retryd' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['headers', '*.headers', 'body', '*.body', 'req.headers.authorization', 'req.headers.cookie'],
        censor: '[REDACTED]',
      },
    },
    destination,
  );
}
