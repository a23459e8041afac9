import { spawn } from 'node:child_process';
import { Client, Pool } from 'undici';
import type { BenchSession } from './load.js';
import { SseParser, type SseMessage } from '../../src/jsonrpc/sse-parser.js';
import { cleanEnv, type Access } from './targets.js';

/**
 * The lean load generator: hand-written JSON-RPC over undici keep-alive connections (or the upstream's
 * pipes for the direct floor), no schema validation, so that on a 2-core machine the client costs as
 * little CPU as possible and the figures describe the server.
 */

const TIMEOUT_MS = 10_000;
/** The largest SSE event the loader reads (the gateway's own parser bounds every event it reads). */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;
const PROTOCOL_VERSION = '2025-11-25';
const ACCEPT = 'application/json, text/event-stream';

type Msg = { jsonrpc: '2.0'; id?: number | string | null; method?: string; params?: unknown; result?: any; error?: { code: number; message: string } };

function initializeMessage(id: number): Msg {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'switchboard-bench-raw', version: '1.0.0' } } };
}

function callMessage(id: number, message: string): Msg {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } };
}

function textOfResult(msg: Msg): string {
  if (msg.error) throw new Error(`JSON-RPC error ${msg.error.code}: ${msg.error.message}`);
  const content = (msg.result?.content ?? []) as Array<{ text?: string }>;
  return content.map((c) => c.text ?? '').join('');
}

/** Keep-alive connections to one gateway, shared by all raw sessions on it. */
export class RawHttp {
  readonly origin: string;
  readonly pool: Pool;

  constructor(origin: string, connections = 256) {
    this.origin = origin;
    this.pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  }

  /**
   * POSTs one message; when `id` is given, resolves with the answer to it. An SSE answer resolves as
   * soon as its event arrives, as a real client would, and the rest of the stream is drained behind
   * it, so a server that ends its streams late is not charged for the delay.
   */
  async post(path: string, headers: Record<string, string>, message: Msg, id?: number): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; answer?: Msg }> {
    const res = await this.pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(message) });
    const type = String(res.headers['content-type'] ?? '');
    if (res.statusCode !== 200 || id === undefined || !type.includes('text/event-stream')) {
      const text = await res.body.text();
      if (id === undefined) return { status: res.statusCode, headers: res.headers };
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      const answer = JSON.parse(text) as Msg;
      if (answer.id !== id) throw new Error(`no response for id ${id} in: ${text.slice(0, 200)}`);
      return { status: res.statusCode, headers: res.headers, answer };
    }
    const answer = await new Promise<Msg>((resolve, reject) => {
      let done = false;
      // The gateway's own parser: events with no data (priming events) are not given.
      const sse = new SseParser(MAX_EVENT_BYTES, (e: SseMessage) => {
        if (done) return; // drained so the connection can be reused
        const m = JSON.parse(e.data) as Msg;
        if (m.id === id && (m.result !== undefined || m.error !== undefined)) {
          done = true;
          resolve(m);
        }
      });
      res.body.on('data', (chunk: Buffer) => done || sse.push(chunk));
      res.body.once('end', () => done || reject(new Error(`the SSE stream ended without a response to id ${id}`)));
      res.body.once('error', (err) => done || reject(err));
    });
    return { status: res.statusCode, headers: res.headers, answer };
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

/** Streamable HTTP: initialize (and optionally notifications/initialized), then one POST per call. */
export async function openRawStreamable(http: RawHttp, path: string, opts: { notifyInitialized?: boolean } = {}): Promise<BenchSession> {
  const init = await http.post(path, {}, initializeMessage(0), 0);
  const answer = init.answer!;
  if (answer.error) throw new Error(`initialize failed: ${answer.error.message}`);
  const sessionId = init.headers['mcp-session-id'];
  if (typeof sessionId !== 'string') throw new Error('initialize answered without Mcp-Session-Id');
  const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': String(answer.result?.protocolVersion ?? PROTOCOL_VERSION) };
  if (opts.notifyInitialized !== false) {
    const n = await http.post(path, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
    if (n.status !== 202 && n.status !== 200) throw new Error(`notifications/initialized: HTTP ${n.status}`);
  }
  let nextId = 0;
  return {
    async call(message: string, id = ++nextId): Promise<string> {
      return textOfResult((await http.post(path, headers, callMessage(id, message), id)).answer!);
    },
    async close(): Promise<void> {
      const res = await http.pool.request({ method: 'DELETE', path, headers });
      await res.body.dump();
    },
  };
}

/** The 2026-07-28 era: what every modern request carries in params._meta instead of a session. */
const MODERN_VERSION = '2026-07-28';
const MODERN_META = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };

/**
 * A 2026-07-28 client: no initialize, no session id; every POST stands alone with the era's headers
 * and _meta. "Opening" one is the server/discover a modern client sends before its first call (what
 * the SDK v2 client's connect does), so setup figures compare with the SDK's; closing it is nothing.
 * Calls from all such clients share the keep-alive pool, as the JSON session variant's do.
 */
export async function openRawModern(http: RawHttp, path: string): Promise<BenchSession> {
  const discover = await http.post(path, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'server/discover' }, { jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: MODERN_META } }, 0);
  const versions = (discover.answer!.result?.supportedVersions ?? []) as string[];
  if (!versions.includes(MODERN_VERSION)) throw new Error(`server/discover does not offer ${MODERN_VERSION}: ${JSON.stringify(discover.answer).slice(0, 200)}`);
  const headers = { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'echo' };
  let nextId = 0;
  return {
    async call(message: string, id = ++nextId): Promise<string> {
      const msg: Msg = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message }, _meta: MODERN_META } };
      return textOfResult((await http.post(path, headers, msg, id)).answer!);
    },
    close: async () => {},
  };
}

/**
 * Answers by id for transports where responses arrive on another channel than the request. Calls
 * time out by one sweep a second over their deadlines rather than by a timer each: arming and
 * clearing a timer per call was loader CPU spent on every legacy call and on none of the others.
 */
class PendingCalls {
  readonly #pending = new Map<number | string, { resolve: (m: Msg) => void; reject: (e: Error) => void; deadline: number }>();
  #sweep: NodeJS.Timeout | undefined;
  stray = 0;

  wait(id: number): Promise<Msg> {
    this.#sweep ??= setInterval(() => this.#expire(), 1000).unref();
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject, deadline: Date.now() + TIMEOUT_MS }));
  }

  /** Calls are kept in the order they were made, so the expired ones are the first. */
  #expire(): void {
    const now = Date.now();
    for (const [id, p] of this.#pending) {
      if (p.deadline > now) return;
      this.#pending.delete(id);
      p.reject(new Error(`no answer to id ${id} within ${TIMEOUT_MS} ms`));
    }
  }

  deliver(msg: Msg): void {
    if (msg.id === undefined || msg.id === null || (msg.result === undefined && msg.error === undefined)) return;
    const p = this.#pending.get(msg.id);
    if (!p) {
      this.stray++;
      return;
    }
    this.#pending.delete(msg.id);
    p.resolve(msg);
  }

  failAll(why: string): void {
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    for (const p of this.#pending.values()) p.reject(new Error(why));
    this.#pending.clear();
  }
}

/**
 * Legacy HTTP+SSE: one GET stream per session on a connection of its own (it stays open), messages
 * POSTed to the endpoint it names, every answer read from the stream.
 */
export async function openRawLegacy(http: RawHttp, ssePath: string): Promise<BenchSession> {
  const conn = new Client(http.origin, { headersTimeout: TIMEOUT_MS, bodyTimeout: 0 });
  const res = await conn.request({ method: 'GET', path: ssePath, headers: { accept: 'text/event-stream' } });
  if (res.statusCode !== 200) {
    await conn.destroy();
    throw new Error(`GET ${ssePath}: HTTP ${res.statusCode}`);
  }
  const pending = new PendingCalls();
  let onEndpoint!: (path: string) => void;
  const endpoint = new Promise<string>((resolve) => (onEndpoint = resolve));
  void (async () => {
    const sse = new SseParser(MAX_EVENT_BYTES, (e: SseMessage) => {
      if (e.event === 'endpoint') {
        const url = new URL(e.data, http.origin);
        onEndpoint(url.pathname + url.search);
      } else {
        pending.deliver(JSON.parse(e.data) as Msg);
      }
    });
    for await (const chunk of res.body) sse.push(chunk as Buffer);
  })()
    .catch(() => {})
    .finally(() => pending.failAll('the SSE stream ended'));
  const timeout = setTimeout(() => onEndpoint(''), TIMEOUT_MS);
  const postPath = await endpoint;
  clearTimeout(timeout);
  const close = async () => {
    res.body.destroy();
    await conn.destroy().catch(() => {});
  };
  if (!postPath) {
    await close();
    throw new Error('no endpoint event on the SSE stream');
  }
  const send = async (msg: Msg) => {
    const r = await http.pool.request({ method: 'POST', path: postPath, headers: { 'content-type': 'application/json' }, body: JSON.stringify(msg) });
    await r.body.dump();
    if (r.statusCode !== 202 && r.statusCode !== 200) throw new Error(`POST ${postPath}: HTTP ${r.statusCode}`);
  };
  const request = async (msg: Msg & { id: number }) => {
    const answer = pending.wait(msg.id);
    await send(msg);
    return answer;
  };
  try {
    const init = await request({ ...initializeMessage(0), id: 0 });
    if (init.error) throw new Error(`initialize failed: ${init.error.message}`);
    await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  } catch (err) {
    await close();
    throw err;
  }
  let nextId = 0;
  return {
    get stray() {
      return pending.stray;
    },
    async call(message: string, id = ++nextId): Promise<string> {
      return textOfResult(await request(callMessage(id, message) as Msg & { id: number }));
    },
    close,
  };
}

/** The direct floor without the SDK: the harness itself speaks newline JSON-RPC to a child it spawns. */
export async function openRawStdio(command: string, args: readonly string[]): Promise<BenchSession> {
  const child = spawn(command, args, { env: cleanEnv(), stdio: ['pipe', 'pipe', 'ignore'] });
  const pending = new PendingCalls();
  let buf = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.startsWith('{')) pending.deliver(JSON.parse(line) as Msg);
    }
  });
  child.once('exit', () => pending.failAll('the upstream exited'));
  child.stdin.on('error', () => {});
  const request = (msg: Msg & { id: number }) => {
    const answer = pending.wait(msg.id);
    child.stdin.write(`${JSON.stringify(msg)}\n`);
    return answer;
  };
  const init = await request({ ...initializeMessage(0), id: 0 });
  if (init.error) throw new Error(`initialize failed: ${init.error.message}`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  let nextId = 0;
  return {
    async call(message: string, id = ++nextId): Promise<string> {
      return textOfResult(await request(callMessage(id, message) as Msg & { id: number }));
    },
    async close(): Promise<void> {
      child.stdin.end();
      const t = setTimeout(() => child.kill('SIGKILL'), 1000);
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
      clearTimeout(t);
    },
  };
}

/** A raw client of whichever HTTP kind the target speaks. */
export function openRaw(http: RawHttp, access: Exclude<Access, { kind: 'stdio' }>): Promise<BenchSession> {
  const path = new URL(access.url).pathname;
  switch (access.kind) {
    case 'streamable':
      return openRawStreamable(http, path);
    case 'sse':
      return openRawLegacy(http, path);
    case 'modern':
      return openRawModern(http, path);
  }
}
