/**
 * A growable buffer of protobuf wire bytes, written the way @opentelemetry/otlp-transformer's writer
 * writes them (minimal varints, lengths back-patched, doubles little-endian), so that what is built on it
 * can be byte-identical to the official serializer. What differs is the cost: a string is encoded in one
 * pass (the official writer scans it for non-ASCII, then copies it character by character, after a
 * size-estimating pass over the whole request that does the same), and long ones by V8's own UTF-8
 * encoder; the buffer is kept from one request to the next instead of allocated per export.
 */
export class ProtobufBytes {
  readonly #size: number;
  #buf: Buffer;
  #pos = 0;

  constructor(size = 64 * 1024) {
    this.#size = size;
    this.#buf = Buffer.allocUnsafe(size);
  }

  get pos(): number {
    return this.#pos;
  }

  /** The buffer written to now (a larger one after the writes outgrew it). */
  get buffer(): Buffer {
    return this.#buf;
  }

  /**
   * Goes on in a new buffer of the first size, leaving the bytes written so far to whoever holds the
   * old one (encoded spans waiting for their export): nothing written is ever changed afterwards.
   */
  detach(): void {
    this.#buf = Buffer.allocUnsafe(this.#size);
    this.#pos = 0;
  }

  /** Starts a new message from the beginning of the buffer (the buffer itself is kept). */
  reset(): void {
    this.#pos = 0;
  }

  /** A copy of what was written (from `start`): the buffer is reused, and the transport may still be sending the last one. */
  copy(start = 0): Uint8Array {
    return new Uint8Array(this.#buf.subarray(start, this.#pos));
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#pos + n) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.#buf.copy(grown, 0, 0, this.#pos);
    this.#buf = grown;
  }

  /** Field number and wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
  tag(field: number, wire: number): void {
    const t = (field << 3) | wire;
    if (t > 127) return this.varint(t);
    this.#room(1);
    this.#buf[this.#pos++] = t;
  }

  /** As the official writer: non-negative values up to 2^32 as they are, others as 64-bit two's complement. */
  varint(value: number): void {
    this.#room(10);
    const buf = this.#buf;
    let p = this.#pos;
    if (value >= 0 && value <= 4294967295) {
      let v = value >>> 0;
      while (v > 127) {
        buf[p++] = (v & 127) | 128;
        v >>>= 7;
      }
      buf[p++] = v;
    } else {
      let low: number;
      let high: number;
      if (value >= 0) {
        low = value >>> 0;
        high = (value / 4294967296) >>> 0;
      } else {
        const abs = Math.abs(value);
        low = ~(abs >>> 0) >>> 0;
        high = ~((abs / 4294967296) >>> 0) >>> 0;
        low = (low + 1) >>> 0;
        if (low === 0) high = (high + 1) >>> 0;
      }
      while (high > 0 || low > 127) {
        buf[p++] = (low & 127) | 128;
        low = ((low >>> 7) | (high << 25)) >>> 0;
        high >>>= 7;
      }
      buf[p++] = low & 127;
    }
    this.#pos = p;
  }

  fixed32(value: number): void {
    this.#room(4);
    this.#pos = le32(this.#buf, this.#pos, value >>> 0);
  }

  fixed64(low: number, high: number): void {
    this.#room(8);
    this.#pos = le32(this.#buf, le32(this.#buf, this.#pos, low >>> 0), high >>> 0);
  }

  /** One byte as it is: a tag known in advance (field number below 16), or a varint below 128. */
  byte(b: number): void {
    this.#room(1);
    this.#buf[this.#pos++] = b;
  }

  /**
   * A KeyValue with a string value (field's tag, length, key, AnyValue{string_value}) in one go when both
   * are ASCII and short enough for every length to be one byte: nearly every span attribute. Returns false,
   * having written nothing, otherwise.
   */
  asciiPair(tag: number, key: string, value: string): boolean {
    const kn = key.length;
    const vn = value.length;
    if (kn + vn > 121) return false;
    this.#room(kn + vn + 8);
    const buf = this.#buf;
    let p = this.#pos;
    buf[p++] = tag;
    buf[p++] = kn + vn + 6;
    buf[p++] = 0x0a;
    buf[p++] = kn;
    p = ascii(buf, p, key);
    if (p < 0) return false;
    buf[p++] = 0x12;
    buf[p++] = vn + 2;
    buf[p++] = 0x0a;
    buf[p++] = vn;
    p = ascii(buf, p, value);
    if (p < 0) return false;
    this.#pos = p;
    return true;
  }

  double(value: number): void {
    this.#room(8);
    this.#buf.writeDoubleLE(value, this.#pos);
    this.#pos += 8;
  }

  /** A string as UTF-8, length first. Lone surrogates become U+FFFD, as TextEncoder makes them. */
  string(s: string): void {
    const n = s.length;
    // Short strings (attribute keys and most values) are copied here while they stay ASCII: their
    // length is known before a byte is written, and a call into V8's encoder costs more than the loop.
    if (n < 128) {
      this.#room(n + 1);
      const end = ascii(this.#buf, this.#pos + 1, s);
      if (end >= 0) {
        this.#buf[this.#pos] = n;
        this.#pos = end;
        return;
      }
    }
    const bytes = Buffer.byteLength(s, 'utf8');
    this.varint(bytes);
    this.#room(bytes);
    this.#pos += this.#buf.write(s, this.#pos, bytes, 'utf8');
  }

  /** Bytes already in wire format (a span encoded when it ended, a cached field), as they are. */
  raw(from: Uint8Array, start = 0, end = from.length): void {
    this.#room(end - start);
    this.#buf.set(start === 0 && end === from.length ? from : from.subarray(start, end), this.#pos);
    this.#pos += end - start;
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.raw(b);
  }

  /**
   * Hexadecimal ids (trace and span ids) as their bytes, as the official hexToBinary reads them (any
   * character outside 0-9a-f is read as if it were A-F): no Uint8Array per id.
   */
  hex(h: string): void {
    const n = (h.length / 2) | 0;
    this.varint(n);
    this.#room(n);
    const buf = this.#buf;
    const start = this.#pos;
    // Node's decoder for the ids the SDK makes (lowercase hex); it stops at the first other character,
    // and then the official reading is done here.
    if (buf.write(h, start, n, 'hex') === n && n * 2 === h.length) {
      this.#pos = start + n;
      return;
    }
    let p = start;
    for (let i = 0; i < n * 2; i += 2) buf[p++] = ((nibble(h.charCodeAt(i)) << 4) | nibble(h.charCodeAt(i + 1))) & 255;
    this.#pos = p;
  }

  /**
   * Opens a length-delimited message: one byte is kept for its length (most nested messages are short),
   * two when the caller expects a longer one (a span). Returns where it starts, for end().
   */
  open(reserve: 1 | 2 = 1): number {
    this.#room(reserve);
    const at = this.#pos;
    this.#pos += reserve;
    return at * 2 + (reserve - 1);
  }

  /** Writes the length of the message opened at `mark`, moving its bytes when the length needs another size. */
  close(mark: number): void {
    const at = mark >>> 1;
    const reserved = (mark & 1) + 1;
    const length = this.#pos - at - reserved;
    const size = varintSize(length);
    if (size !== reserved) {
      this.#room(size - reserved);
      this.#buf.copyWithin(at + size, at + reserved, this.#pos);
      this.#pos += size - reserved;
    }
    const buf = this.#buf;
    let p = at;
    let v = length;
    while (v > 127) {
      buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[p] = v;
  }
}

/**
 * Copies an ASCII string into buf from p; the position after it, or -1 at its first character beyond
 * ASCII (what was copied before it is left for the caller to overwrite).
 */
function ascii(buf: Buffer, p: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 127) return -1;
    buf[p++] = c;
  }
  return p;
}

function le32(buf: Buffer, p: number, v: number): number {
  buf[p] = v;
  buf[p + 1] = v >>> 8;
  buf[p + 2] = v >>> 16;
  buf[p + 3] = v >>> 24;
  return p + 4;
}

function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return c - 55;
}

function varintSize(v: number): number {
  if (v < 128) return 1;
  if (v < 16384) return 2;
  if (v < 2097152) return 3;
  if (v < 268435456) return 4;
  return 5;
}
