import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';
import { isoTimeFunction } from './iso-time.js';
import { CLOSE_LOGS, stdoutDestination, type StdoutDestination } from './stdout-destination.js';

export type { Logger };

/**
 * JSON logs to stdout; credentials never reach the log, whatever a caller passes in. `mixin` adds
 * fields to every line (trace_id and span_id when tracing is on; absent, lines cost nothing more).
 */
export function createLogger(level: string, destination?: DestinationStream, mixin?: () => object): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'switchboard' },
    timestamp: isoTimeFunction(),
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
  // Asynchronous stdout (stdout-destination.ts): an orderly exit lets every line out (closeLogs); a
  // crash or SIGKILL can lose the write in flight, and a reader that stopped reading what is past 16 MiB.
  return pino(options, destination ?? stdoutDestination());
}

/**
 * Lets out what the default destination still holds, a write in flight included, for at most
 * `timeoutMs`; then logging ends. For an orderly exit (a logger with another destination: at once).
 */
export function closeLogs(logger: Logger, timeoutMs: number): Promise<void> {
  const stream = (logger as unknown as Record<symbol, Partial<StdoutDestination> | undefined>)[pino.symbols.streamSym];
  const close = stream?.[CLOSE_LOGS];
  return typeof close === 'function' ? close.call(stream, timeoutMs) : Promise.resolve();
}
