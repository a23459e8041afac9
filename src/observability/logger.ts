import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

export type { Logger };

/**
 * JSON logs to stdout; credentials never reach the log, whatever a caller passes in. `mixin` adds
 * fields to every line (trace_id and span_id when tracing is on; absent, lines cost nothing more).
 */
export function createLogger(level: string, destination?: DestinationStream, mixin?: () => object): Logger {
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
        '*.requestStateKey',
        '*.requestStatePreviousKeys',
        '*.refresh_token',
        '*.accessToken',
        '*.refreshToken',
        '*.sealed',
        '*.code_verifier',
        'query.code',
        'query.state',
        'query.flow',
        '*.previousKeys',
      ],
      censor: '[redacted]',
    },
  };
  if (mixin) options.mixin = mixin;
  // Asynchronous stdout: lines written while a write is in flight leave together in the next one, so a
  // busy gateway (an audit line per call) does not pay a write syscall per line. pino flushes what is
  // left synchronously on exit; only a SIGKILL (or a stalled reader, see maxLength) can lose lines.
  // maxLength: behind a reader that stopped reading, lines are dropped past 16 MiB rather than held.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024 }));
}
