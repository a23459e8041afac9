import type { IncomingMessage } from 'node:http';

/**
 * The bytes of a body as they arrive, decoded once at its end. Decoding each chunk as it came and joining
 * the texts (`text += chunk`) made a body trickled a byte per TCP segment a rope of one string per byte:
 * some 34 bytes of heap per byte of body, over 100 MiB for a body within a 4 MiB limit. Here a body is held
 * as its bytes: the lone chunk of the common body as it came (decoded straight from it, nothing copied),
 * else one Buffer grown by doubling as bytes arrive, never past the declared length (and never that length
 * before its bytes have come: a client can declare a length it never sends).
 */
class BodyBytes {
  #first: Buffer | undefined;
  #buf: Buffer | undefined;
  #used = 0;
  readonly #declared: number;

  constructor(declared: number) {
    this.#declared = declared;
  }

  add(chunk: Buffer): void {
    if (this.#used === 0 && this.#first === undefined) {
      this.#first = chunk;
      return;
    }
    if (this.#first !== undefined) {
      const first = this.#first;
      this.#first = undefined;
      this.#append(first);
    }
    this.#append(chunk);
  }

  #append(chunk: Buffer): void {
    const need = this.#used + chunk.length;
    if (this.#buf === undefined || need > this.#buf.length) {
      // Doubling keeps the copying linear in the body; node's parser holds a body to its Content-Length,
      // the `need` is only there should a chunk ever go past it.
      const grown = Buffer.allocUnsafe(Math.max(need, Math.min(this.#declared, 2 * need)));
      this.#buf?.copy(grown, 0, 0, this.#used);
      this.#buf = grown;
    }
    chunk.copy(this.#buf, this.#used);
    this.#used = need;
  }

  /** The body as UTF-8 text: invalid bytes as U+FFFD, a BOM kept (as the stream's utf8 decoding gave it). */
  text(): string {
    if (this.#first !== undefined) return this.#first.toString('utf8');
    return this.#buf === undefined ? '' : this.#buf.toString('utf8', 0, this.#used);
  }
}

/**
 * The whole body as UTF-8 text (as Fastify's text parser reads it), or undefined when it never ends.
 * `declared` is its Content-Length. Its listeners go as soon as it settles: a POST answered by a long
 * stream must not keep its body.
 */
export function readBody(raw: IncomingMessage, declared: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const bytes = new BodyBytes(declared);
    const data = (chunk: Buffer) => bytes.add(chunk);
    const settle = (body: string | undefined) => {
      raw.off('data', data);
      raw.off('end', end);
      raw.off('error', gone);
      raw.off('close', gone);
      resolve(body);
    };
    const end = () => settle(bytes.text());
    const gone = () => settle(undefined);
    raw.on('data', data);
    raw.once('end', end);
    raw.once('error', gone);
    raw.once('close', gone);
  });
}
