/**
 * The raw load client's reader of a text/event-stream: chunks in, complete events out (their event
 * name and data). Written for the loader's CPU, which on a 2-core machine shares the cores with the
 * gateway it measures: every answer of an SSE variant passes here, so it scans with indexOf over one
 * buffer and slices each field once, instead of splitting every block into arrays of lines (what the
 * loader first did, at up to a fifth of its CPU per call on the legacy transport). Comments and fields
 * other than event and data are skipped; a data field split over several lines is joined with "\n".
 */
export class SseReader {
  readonly #utf8 = new TextDecoder(); // a character split across chunks must not be mangled
  #buf = '';

  /** Reads one chunk; `onEvent` gets every event completed by it, in order. */
  push(chunk: Uint8Array, onEvent: (event: string, data: string) => void): void {
    let text = this.#utf8.decode(chunk, { stream: true });
    // CRLF line ends are legal (a CR dropped, so a pair split across chunks is still one end).
    if (text.includes('\r')) text = text.replace(/\r/g, '');
    const buf = this.#buf + text;
    let at = 0;
    for (let end; (end = buf.indexOf('\n\n', at)) >= 0; at = end + 2) {
      let event = 'message';
      let data: string | undefined;
      for (let line = at; line < end; ) {
        let nl = buf.indexOf('\n', line);
        if (nl < 0 || nl > end) nl = end;
        if (buf.startsWith('data:', line)) {
          const value = buf.slice(buf.charCodeAt(line + 5) === 32 ? line + 6 : line + 5, nl);
          data = data === undefined ? value : `${data}\n${value}`;
        } else if (buf.startsWith('event:', line)) {
          event = buf.slice(buf.charCodeAt(line + 6) === 32 ? line + 7 : line + 6, nl);
        }
        line = nl + 1;
      }
      if (data !== undefined) onEvent(event, data);
    }
    this.#buf = at === 0 ? buf : buf.slice(at);
  }
}
