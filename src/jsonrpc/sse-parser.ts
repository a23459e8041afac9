import { StringDecoder } from 'node:string_decoder';

/** A line or an event over the parser's limit: the stream cannot be read past it. */
export class SseTooLargeError extends Error {}

export interface SseMessage {
  event: string;
  data: string;
  id: string | undefined;
}

const LF = 0x0a;
const BOM = 0xfeff;

/** How much of a skipped event's data onSkipped is shown, from its start and from its end. */
export const SKIPPED_EXCERPT_CHARS = 1024;

/** The start and the end of a skipped event's data (at most SKIPPED_EXCERPT_CHARS each): what it was, read without holding it. */
export interface SkippedExcerpt {
  head: string;
  tail: string;
}

/**
 * Incremental text/event-stream parser (the WHATWG rules that matter for MCP): fields event, data, id
 * and retry; comment lines ignored; an event is dispatched at a blank line. CRLF, LF and a bare CR each end a
 * line (before 2026-12-06 a bare CR did not: a server ending its lines so was one endless line, no event read);
 * a byte-order mark first in the stream is dropped. Bounded: an event larger
 * than maxEventBytes is an error rather than unbounded growth. Without `onEvent`, completed events wait
 * for `take()` (what readSse uses). With `onSkipped`, such an event is skipped instead: its data (and any
 * line over the limit) is dropped unread into memory, its id still taken, and onSkipped hears of it once
 * it ends. For a stream resumed with Last-Event-ID: without the id a resume replays the event for ever.
 * onSkipped is shown the start and the end of its data too (SkippedExcerpt), bounded: where a message's
 * id is (a legacy SSE stream carries every answer, and only the call answered must fail).
 *
 * Kept rather than eventsource-parser (3.x, evaluated): that one is as linear and as bounded, but it
 * drops an event that has an id and no data, so the last event id a resumption needs would be lost.
 */
export class SseParser {
  /** The unfinished line, in pieces: only new text is ever searched for a newline (linear in the input). */
  #pending: string[] = [];
  #pendingLength = 0;
  /** The pieces last in #pending (and the lines last in #data) not yet joined: see joinedTail. */
  #pendingRun = 0;
  #dataRun = 0;
  /** Bytes arrive in arbitrary chunks: a character split between two of them must not be mangled. */
  #decoder: StringDecoder | undefined;
  #event = '';
  #data: string[] = [];
  #dataBytes = 0;
  #id: string | undefined;
  lastEventId: string | undefined;
  retryMs: number | undefined;
  readonly #maxEventBytes: number;
  readonly #onEvent: (e: SseMessage) => void;
  #ready: SseMessage[] | undefined;
  readonly #onSkipped: ((id: string | undefined, data: SkippedExcerpt) => void) | undefined;
  /** The event being read is over the limit and is being skipped (onSkipped only). */
  #skipping = false;
  /** The rest of the current line is over the limit: dropped up to its newline (onSkipped only). */
  #cutLine = false;
  /** The line being cut is a data line: the rest of it still goes to the excerpt's end. */
  #cutData = false;
  /** The skipped event's data, its start and its end (see SkippedExcerpt). */
  #head = '';
  #tail = '';
  /** The last chunk ended with a CR: an LF first in the next one is that CRLF's end, not a blank line. */
  #afterCR = false;
  /** No text read yet: a byte-order mark first in the stream is dropped (see push). */
  #atStart = true;

  constructor(maxEventBytes: number, onEvent?: (e: SseMessage) => void, onSkipped?: (id: string | undefined, data: SkippedExcerpt) => void) {
    this.#maxEventBytes = maxEventBytes;
    this.#onEvent = onEvent ?? ((e) => (this.#ready ??= []).push(e));
    this.#onSkipped = onSkipped;
  }

  /** The event being read went over the limit: an error, or (onSkipped) the start of its skipping. */
  #tooLarge(what: string): void {
    if (!this.#onSkipped) throw new SseTooLargeError(`SSE ${what} exceeds ${this.#maxEventBytes} bytes`);
    if (!this.#skipping) this.#keep(this.#data.join('\n'), false);
    this.#skipping = true;
    this.#data = [];
    this.#dataRun = 0;
    this.#dataBytes = 0;
  }

  /** More of a skipped event's data (`joined`: a line of its own, after a "\n"): only its start and end are kept. */
  #keep(text: string, joined: boolean): void {
    if (joined && this.#head !== '') text = `\n${text}`;
    if (this.#head.length < SKIPPED_EXCERPT_CHARS) this.#head += text.slice(0, SKIPPED_EXCERPT_CHARS - this.#head.length);
    this.#tail = text.length >= SKIPPED_EXCERPT_CHARS ? text.slice(-SKIPPED_EXCERPT_CHARS) : (this.#tail + text).slice(-SKIPPED_EXCERPT_CHARS);
  }

  /**
   * A line over the limit, `pieces` what came of it (`length` chars): the event is skipped and the rest of
   * the line dropped. Only its start and end are read: joining the pieces would copy a line as long as the limit.
   */
  #cut(pieces: string[], length: number): void {
    this.#tooLarge('line');
    this.#cutLine = true;
    const start = startOf(pieces, SKIPPED_EXCERPT_CHARS + 6);
    this.#cutData = start.startsWith('data:');
    if (!this.#cutData) return;
    this.#keep(start.slice(start.startsWith('data: ') ? 6 : 5), true);
    if (length > start.length) this.#tail = endOf(pieces, SKIPPED_EXCERPT_CHARS);
  }

  /** The events completed since the last call, when no onEvent was given; undefined when there are none. */
  take(): SseMessage[] | undefined {
    const ready = this.#ready;
    this.#ready = undefined;
    return ready;
  }

  push(input: string | Uint8Array): void {
    const chunk = typeof input === 'string' ? input : (this.#decoder ??= new StringDecoder('utf8')).write(input as Buffer);
    let start = 0;
    // The LF of a CRLF whose CR ended the last chunk: that line has ended already (not a blank line after it).
    if (this.#afterCR && chunk.length > 0) start = chunk.charCodeAt(0) === LF ? 1 : 0;
    if (chunk.length > 0) this.#afterCR = false;
    // The SSE spec drops one U+FEFF first in the stream (bytes split over chunks come whole from the decoder): read
    // as text, the first field was "\uFEFFevent", unknown, and a legacy stream's endpoint event was lost.
    if (this.#atStart && chunk.length > 0) {
      this.#atStart = false;
      if (chunk.charCodeAt(0) === BOM) start = 1;
    }
    // The next CR and LF at or after `start`, each searched again only once passed: linear, whichever the stream uses.
    let cr = -2;
    let lf = -2;
    for (;;) {
      if (cr !== -1 && cr < start) cr = chunk.indexOf('\r', start);
      if (lf !== -1 && lf < start) lf = chunk.indexOf('\n', start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      let line = chunk.slice(start, end);
      if (this.#pending.length > 0) {
        line = this.#pending.join('') + line;
        this.#pending = [];
        this.#pendingLength = 0;
        this.#pendingRun = 0;
      }
      // CRLF, LF or a bare CR each end a line (the SSE spec); a CR last in the chunk may have its LF in the next.
      start = end === cr && lf === cr + 1 ? end + 2 : end + 1;
      if (end === cr && end === chunk.length - 1) this.#afterCR = true;
      if (this.#cutLine) {
        this.#cutLine = false; // the end of a line over the limit, dropped with the rest of it
        if (this.#cutData) this.#keep(line, false);
        continue;
      }
      this.#line(line);
    }
    this.#rest(chunk, start);
  }

  /** What follows the chunk's last line end: the start of a line, kept (bounded) until its end comes. */
  #rest(chunk: string, start: number): void {
    if (start < chunk.length && this.#cutLine) {
      if (this.#cutData) this.#keep(chunk.slice(start), false);
    } else if (start < chunk.length) {
      this.#pending.push(start === 0 ? chunk : chunk.slice(start));
      this.#pendingLength += chunk.length - start;
      this.#pendingRun = joinedTail(this.#pending, this.#pendingRun + 1, '');
      if (this.#pendingLength > this.#maxEventBytes) {
        this.#cut(this.#pending, this.#pendingLength);
        this.#pending = [];
        this.#pendingLength = 0;
        this.#pendingRun = 0;
      }
    }
  }

  #line(line: string): void {
    if (line === '') {
      if (this.#id !== undefined) this.lastEventId = this.#id;
      const data = this.#data.join('\n');
      // An event with empty data (a priming event, a bare id) only moves lastEventId.
      if (this.#skipping) this.#onSkipped?.(this.#id, { head: this.#head, tail: this.#tail });
      else if (data !== '') this.#onEvent({ event: this.#event || 'message', data, id: this.#id });
      this.#skipping = false;
      this.#head = this.#tail = '';
      this.#event = '';
      this.#data = [];
      this.#dataRun = 0;
      this.#dataBytes = 0;
      this.#id = undefined;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        // The "\n" that joins it to the line before counts too: counted without it, empty data lines
        // ("data:" again and again) weighed nothing, and a hostile upstream grew one event without bound.
        if (this.#skipping) {
          this.#keep(value, true);
          break;
        }
        this.#dataBytes += value.length + (this.#data.length > 0 ? 1 : 0);
        this.#data.push(value);
        this.#dataRun = joinedTail(this.#data, this.#dataRun + 1, '\n');
        if (this.#dataBytes > this.#maxEventBytes) this.#tooLarge('event');
        break;
      case 'id':
        if (!value.includes('\0')) this.#id = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
    }
  }
}

/** How many pieces (of a line, or data lines of an event) in a row are joined into one string. */
const PIECES_JOINED = 256;

/**
 * `run`, the entries last in `list` not yet joined, joined with `sep` once there are PIECES_JOINED of them;
 * returns the run after. Each kept as it came, an entry cost far more than its text: a line sent a byte or two
 * per TCP segment was held as some 17 bytes a byte, short data lines as 4, so the event's limit (16 MiB)
 * let a stream hold hundreds of MB. Joining only the newest: the text is copied about once, not once a run.
 */
function joinedTail(list: string[], run: number, sep: string): number {
  if (run < PIECES_JOINED) return run;
  list.push(list.splice(-run).join(sep));
  return 0;
}

/** The first `n` chars of the text in `pieces`. */
function startOf(pieces: readonly string[], n: number): string {
  let s = '';
  for (const p of pieces) {
    if (s.length >= n) break;
    s += p.slice(0, n - s.length);
  }
  return s;
}

/** The last `n` chars of the text in `pieces`. */
function endOf(pieces: readonly string[], n: number): string {
  let s = '';
  for (let i = pieces.length - 1; i >= 0 && s.length < n; i--) s = pieces[i]!.slice(-(n - s.length)) + s;
  return s;
}
