import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

export type { Logger };

/** JSON logs to stdout; credentials never reach the log, whatever a caller passes in. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'switchboard' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'headers.cookie',
        '*.authorization',
        '*.token',
        '*.access_token',
        '*.client_secret',
        '*.password',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
