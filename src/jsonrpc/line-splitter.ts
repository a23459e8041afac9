import { keptChunk } from './small-chunks.js';

/**
 * Newline framing for stdio: feeds chunks in, calls back one complete line at a time. A line longer
 * than maxLineBytes is discarded up to its newline and reported, so one runaway message cannot grow
 * the buffer without bound. `onOversize` hears of it the moment the limit is crossed (a flood may
 * never send its newline); `onOverflow` once the line has ended, with its full size. A line's pieces are kept
 * as keptChunk keeps them: a server writing a line a byte per write had each byte held as a Buffer of its own.
 */
export class LineSplitter {
  #chunks: Buffer[] = [];
  /** The small chunks last in #chunks (see keptChunk). */
  #small = 0;
  #size = 0;
  #discarding = false;
  readonly #maxLineBytes: number;
  readonly #onLine: (line: string, bytes: number) => void;
  readonly #onOverflow: (bytes: number) => void;
  readonly #onOversize: ((bytesSoFar: number) => void) | undefined;

  constructor(maxLineBytes: number, onLine: (line: string, bytes: number) => void, onOverflow: (bytes: number) => void, onOversize?: (bytesSoFar: number) => void) {
    this.#maxLineBytes = maxLineBytes;
    this.#onLine = onLine;
    this.#onOverflow = onOverflow;
    this.#onOversize = onOversize;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) {
        this.#append(chunk.subarray(start));
        return;
      }
      this.#append(chunk.subarray(start, nl));
      this.#flush();
      start = nl + 1;
    }
  }

  /**
   * The stream ended: a last line without its newline is still a line. Only for streams where a partial
   * line means something (a server's stderr: the reason it exited, written without a newline).
   */
  end(): void {
    if (this.#size > 0 || this.#discarding) this.#flush();
  }

  #append(part: Buffer): void {
    if (part.length === 0) return;
    if (this.#discarding) {
      this.#size += part.length;
      return;
    }
    this.#size += part.length;
    // The limit counts every byte before "\n", a CRLF line's "\r" included.
    if (this.#size > this.#maxLineBytes) {
      this.#chunks = [];
      this.#small = 0;
      this.#discarding = true;
      this.#onOversize?.(this.#size);
      return;
    }
    this.#small = keptChunk(this.#chunks, part, this.#small);
  }

  #flush(): void {
    if (this.#discarding) {
      this.#onOverflow(this.#size);
    } else if (this.#size > 0) {
      const buf = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#size);
      let line = buf.toString('utf8');
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line.length > 0) this.#onLine(line, this.#size);
    }
    this.#chunks = [];
    this.#small = 0;
    this.#size = 0;
    this.#discarding = false;
  }
}
