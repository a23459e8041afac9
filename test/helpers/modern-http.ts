// Raw 2026-07-28 requests for the suites that look at the wire itself (requestState refusals, retries
// across replicas): one POST per request with the headers and _meta a conforming client sends, and the
// journal a stdio fixture started with `--journal FILE` keeps of every message it received.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURE } from './gateway.js';

export const MODERN_VERSION = '2026-07-28';

export interface ModernAnswer {
  status: number;
  /** The JSON-RPC response (the last message of an SSE answer). */
  body: any;
  /** Every message of the answer in order (an SSE answer's notifications, then `body`). */
  messages: any[];
}

export interface ModernPostOptions {
  /** Bearer token. */
  token?: string;
  /** The request's declared client capabilities (default: elicitation and sampling). */
  caps?: Record<string, unknown>;
  /** More HTTP headers (a traceparent). */
  headers?: Record<string, string>;
  /** Aborts the POST (closing it is this era's cancellation). */
  signal?: AbortSignal;
  /** More `_meta` members (a log level, a progress token). */
  meta?: Record<string, unknown>;
}

let nextId = 1;

/** One modern POST to `url`; checks that whatever answers echoes the request id. */
export async function modernPost(url: URL | string, method: string, params: Record<string, unknown>, o: ModernPostOptions = {}): Promise<ModernAnswer> {
  const id = nextId++;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method };
  const name = params.name ?? params.uri;
  if (typeof name === 'string') headers['mcp-name'] = name;
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  Object.assign(headers, o.headers);
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientCapabilities': o.caps ?? { elicitation: { form: {} }, sampling: {} },
    'io.modelcontextprotocol/clientInfo': { name: 'modern-http-test', version: '1' },
    ...o.meta,
  };
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } }), signal: o.signal });
  const text = await res.text();
  const sse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
  const messages = sse ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))) : text ? [JSON.parse(text)] : [];
  const body = messages.at(-1);
  assert.equal(body?.id, id, `the answer carries the request id: ${text}`);
  return { status: res.status, body, messages };
}

/** Asserts a refused requestState: HTTP 400, JSON-RPC -32602, and the refusal's category. */
export function assertStateRefused(a: ModernAnswer, reason: string | RegExp): void {
  assert.equal(a.status, 400, JSON.stringify(a.body));
  assert.equal(a.body.error?.code, -32602, JSON.stringify(a.body));
  if (typeof reason === 'string') assert.equal(a.body.error.data?.reason, reason, JSON.stringify(a.body.error));
  else assert.match(String(a.body.error.data?.reason), reason);
}

/** An input_required answer's single input request and its state. */
export function inputRound(a: ModernAnswer): { key: string; method: string; params: any; state: string } {
  assert.equal(a.status, 200, JSON.stringify(a.body));
  const r = a.body.result;
  assert.equal(r?.resultType, 'input_required', JSON.stringify(a.body));
  const entries = Object.entries(r.inputRequests as Record<string, { method: string; params: any }>);
  assert.equal(entries.length, 1, JSON.stringify(r.inputRequests));
  const [key, ask] = entries[0]!;
  assert.equal(typeof r.requestState, 'string');
  return { key, method: ask.method, params: ask.params, state: r.requestState };
}

/** The file a fixture started with `--journal FILE` appends every received message to. */
export class Journal {
  readonly file: string;

  constructor() {
    this.file = join(mkdtempSync(join(tmpdir(), 'swb-journal-')), 'upstream.jsonl');
    writeFileSync(this.file, '');
  }

  all(): any[] {
    return readFileSync(this.file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  }

  /** A position to read from later. */
  mark(): number {
    return this.all().length;
  }

  /** The gateway config of one shared stdio fixture `fx` writing to this journal, served at `/mcp`. */
  gatewayConfig() {
    return {
      upstreams: [{ name: 'fx', transport: 'stdio' as const, ...FIXTURE, args: [...FIXTURE.args, '--journal', this.file], sharing: 'shared' as const, pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    };
  }

  /** What arrived after `mark`, health-check pings left out (they come on their own schedule). */
  since(mark: number): any[] {
    return this.all().slice(mark).filter((m) => m.method !== 'ping');
  }
}

/**
 * Opens a subscriptions/listen stream and reads its messages one at a time (`next`), until `close`.
 * The stream is an SSE response to one POST; the gateway answers it with the acknowledgement first.
 * `token`: its bearer token (none: auth off).
 */
export async function openListen(url: URL | string, id: string | number, notifications: Record<string, unknown>, token?: string): Promise<{ status: number; next: () => Promise<any>; close: () => void }> {
  const ac = new AbortController();
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'subscriptions/listen', ...auth },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    signal: ac.signal,
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  const next = async (): Promise<any> => {
    for (;;) {
      const i = buf.indexOf('\n\n');
      if (i >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.replace(/^data: ?/, '')).join('\n');
        if (data) return JSON.parse(data);
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('the listen stream ended');
      buf += value;
    }
  };
  return { status: res.status, next, close: () => ac.abort() };
}
