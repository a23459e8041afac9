import type { ServerResponse } from 'node:http';
import type { EdgeReply } from './edge-exchange.js';

/**
 * A direct POST's reply (direct-posts.ts): what the MCP routes ask of Fastify's reply, written straight
 * to node's response. `send` answers as Fastify's does for what the routes send: a text body with its
 * length (text/plain unless a Content-Type was set; a JSON type gains `charset=utf-8`), or an empty body
 * with `Content-Length: 0`.
 */
export class DirectReply implements EdgeReply {
  readonly raw: ServerResponse;
  readonly refused: ((status: number, code: number, message: string) => void) | undefined;
  #status = 200;

  constructor(raw: ServerResponse, refused?: (status: number, code: number, message: string) => void) {
    this.raw = raw;
    this.refused = refused;
  }

  code(status: number): this {
    this.#status = status;
    return this;
  }

  header(name: string, value: string): this {
    this.raw.setHeader(name, value);
    return this;
  }

  headers(values: Record<string, string>): this {
    for (const name in values) this.raw.setHeader(name, values[name]!);
    return this;
  }

  send(payload?: string): this {
    const res = this.raw;
    if (res.headersSent) {
      res.end();
      return this;
    }
    res.statusCode = this.#status;
    if (payload === undefined || payload === '') {
      res.setHeader('content-length', '0');
      res.end();
      return this;
    }
    const type = res.getHeader('content-type');
    if (type === undefined) res.setHeader('content-type', 'text/plain; charset=utf-8');
    // As Fastify does: a JSON media type without a charset is sent as UTF-8, and says so.
    else if (typeof type === 'string' && type.includes('json') && !/;\s*charset=/i.test(type)) res.setHeader('content-type', `${type}; charset=utf-8`);
    res.setHeader('content-length', String(Buffer.byteLength(payload)));
    res.end(payload);
    return this;
  }

  hijack(): this {
    return this;
  }
}
