import { pino, type Logger } from 'pino';

const S = pino.symbols as unknown as Record<string, symbol>;

/** The parts of a logger's state a line is made of (pino.symbols, pino's documented door for integrations). */
interface LoggerState {
  lsCache: Record<number, string>;
  chindings: string;
  time: () => string;
  mixin: ((obj: object, level: number, logger: Logger) => object) | undefined;
  end: string;
  messageKey: string;
  /** The logger's number for info (30 unless its levels are its own). */
  info: number;
}

/**
 * Info lines of a pino logger, byte for byte as pino writes them (the same level, time, bindings, mixin,
 * members and message, in the same order, to the same stream), but serialized by V8's JSON.stringify
 * in one call rather than by pino's loop, which escapes every key and string value in JavaScript. For
 * the one line written on every proxied call, the audit line: pino's serializer and its string
 * concatenations were about 20,000 instructions of a call's 265,000 (callgrind, Node 22). Only for a
 * line of plain members (strings, finite numbers, booleans; no error or member pino treats apart) with
 * nothing to redact: a logger with redaction, serializers, log formatters, stream hooks or a stream
 * that reads pino's metadata (multistream) gets its lines from pino itself.
 */
export class PlainLines {
  readonly #logger: Logger;
  readonly #state: LoggerState | undefined;
  /** Each message's end of line (`,"msg":"audit"}` and the newline), made once. */
  readonly #tails = new Map<string, string>();

  constructor(logger: Logger) {
    this.#logger = logger;
    const l = logger as unknown as Record<symbol, any>;
    const formatters = l[S.formattersSym!] as { log?: unknown } | undefined;
    const hooks = l[S.hooksSym!] as { streamWrite?: unknown } | undefined;
    const stringifiers = l[S.stringifiersSym!] as object | undefined;
    const serializers = l[S.serializersSym!] as Record<string, unknown> | undefined;
    const stream = l[S.streamSym!] as Record<symbol, unknown> | undefined;
    const plain =
      typeof l[S.lsCacheSym!] === 'object' &&
      typeof l[S.chindingsSym!] === 'string' &&
      typeof l[S.timeSym!] === 'function' &&
      typeof l[S.endSym!] === 'string' &&
      formatters?.log === undefined &&
      hooks?.streamWrite === undefined &&
      // Redaction's per-member stringifiers (a child's `redact: []` leaves only its formatter, which asJson never calls).
      (stringifiers === undefined || (Object.keys(stringifiers).length === 0 && (stringifiers as Record<symbol, unknown>)[S.wildcardFirstSym!] === undefined)) &&
      // pino's default serializers are for err only; any other is a member this writer would not serialize.
      (serializers === undefined || Object.keys(serializers).every((k) => k === 'err')) &&
      stream !== undefined &&
      stream[S.needsMetadataGsym!] !== true;
    this.#state = plain
      ? { lsCache: l[S.lsCacheSym!], chindings: l[S.chindingsSym!], time: l[S.timeSym!], mixin: l[S.mixinSym!], end: l[S.endSym!], messageKey: l[S.messageKeySym!] ?? 'msg', info: logger.levels.values.info! }
      : undefined;
  }

  /** Whether lines go out through this writer (false: through pino, as with any other logger). */
  get direct(): boolean {
    return this.#state !== undefined;
  }

  /** One info line: `fields`' members (no `err`, no member named like the message key) and `msg`. */
  info(fields: object, msg: string): void {
    const state = this.#state;
    const logger = this.#logger;
    if (state === undefined) return void logger.info(fields, msg);
    if (!logger.isLevelEnabled('info')) return;
    const level = state.info;
    // pino merges the mixin's members first, the line's own after them (they win a name both have).
    const mixed = state.mixin ? Object.assign(state.mixin(fields, level, logger), fields) : fields;
    const members = JSON.stringify(mixed);
    const head = state.lsCache[level] + state.time.call(logger) + state.chindings;
    const text = members.length > 2 ? `${head},${members.slice(1, -1)}${this.#tail(msg, state)}` : head + this.#tail(msg, state);
    (logger as unknown as Record<symbol, { write(s: string): void }>)[S.streamSym!]!.write(text);
  }

  #tail(msg: string, state: LoggerState): string {
    let tail = this.#tails.get(msg);
    if (tail === undefined) {
      tail = `,${JSON.stringify(state.messageKey)}:${JSON.stringify(msg)}${state.end}`;
      this.#tails.set(msg, tail);
    }
    return tail;
  }
}
