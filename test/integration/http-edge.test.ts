// Raw-HTTP tests of the gateway's client-facing edges: Streamable HTTP on /mcp and the legacy HTTP+SSE
// transport on /sse + /messages. Every test talks plain HTTP (fetch) to a real gateway fronting the
// conformance fixture over stdio, and checks the HTTP status together with the JSON-RPC body. Refusals
// decided at the edge alone (status codes, headers, validation, the Origin/Host guard) are in
// http-edge-rules.test.ts, through fastify.inject(); this file keeps streams, sessions and the wiring.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseConfig } from '../../src/config/load.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import {
  VISIBLE_ASCII,
  expectRpcError,
  expectRpcErrorObject,
  fixtureConfig,
  initializeBody,
  openSession,
  post,
  type Json,
  type Session,
} from '../helpers/http-edge.js';
import { waitFor } from '../helpers/wait.js';
import { openRawSocket } from '../helpers/raw-socket.js';
import { gzipSync } from 'node:zlib';

// ---------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------

/** Waits until the session's event log holds, after the event `afterId`, a message that matches. */
async function logged(gw: RunningGateway, sid: string, afterId: string, match: (m: Json) => boolean): Promise<void> {
  const [stream, seq] = afterId.split('_').map(Number) as [number, number];
  await waitFor(async () => ((await gw.app.gateway.events.replay(sid, stream, seq)) ?? []).some((e) => match(JSON.parse(e.data) as Json)), { timeoutMs: 10_000 });
}

interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  retry?: number;
}

/** An incremental text/event-stream reader over a fetch body. `next()` resolves null at the end. */
class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buf = '';
  #queue: SseEvent[] = [];
  #cur: Partial<SseEvent> & { dataLines: string[]; any: boolean } = { dataLines: [], any: false };
  #pending: ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> | undefined;
  #done = false;

  constructor(body: ReadableStream<Uint8Array> | null) {
    assert.ok(body, 'the response has a body');
    this.#reader = body.getReader();
  }

  /** The next event, or null when the stream ended. Throws after timeoutMs without one. */
  async next(timeoutMs = 5000): Promise<SseEvent | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const e = this.#queue.shift();
      if (e) return e;
      if (this.#done) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE event within ${timeoutMs} ms`);
      this.#pending ??= this.#reader.read();
      const p = this.#pending;
      p.catch(() => {}); // a read cut short by an abort must not become an unhandled rejection
      let timer: NodeJS.Timeout | undefined;
      const r = await Promise.race([p, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), left)))]);
      clearTimeout(timer);
      if (r === 'timeout') throw new Error(`no SSE event within ${timeoutMs} ms`);
      this.#pending = undefined;
      if (r.done) {
        this.#done = true;
        this.#feed(this.#decoder.decode() + '\n\n');
      } else {
        this.#feed(this.#decoder.decode(r.value, { stream: true }));
      }
    }
  }

  /** Events until (and including) the first whose predicate holds; fails at the end of the stream. */
  async until(pred: (e: SseEvent) => boolean, timeoutMs = 5000, max = 100): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    for (let i = 0; i < max; i++) {
      const e = await this.next(timeoutMs);
      assert.ok(e, `the stream ended before the expected event; got ${JSON.stringify(out)}`);
      out.push(e);
      if (pred(e)) return out;
    }
    throw new Error(`no matching event among ${max}`);
  }

  /** Asserts the stream ends (possibly after more events, which are returned). */
  async expectEnd(timeoutMs = 3000, max = 100): Promise<SseEvent[]> {
    const rest: SseEvent[] = [];
    for (let i = 0; i < max; i++) {
      const e = await this.next(timeoutMs);
      if (e === null) return rest;
      rest.push(e);
    }
    throw new Error('the stream did not end');
  }

  #feed(text: string): void {
    this.#buf += text;
    for (;;) {
      const nl = this.#buf.search(/\r\n|\r|\n/);
      if (nl === -1) return;
      const line = this.#buf.slice(0, nl);
      this.#buf = this.#buf.slice(this.#buf[nl] === '\r' && this.#buf[nl + 1] === '\n' ? nl + 2 : nl + 1);
      this.#line(line);
    }
  }

  #line(line: string): void {
    if (line === '') {
      if (this.#cur.any) {
        const e: SseEvent = { data: this.#cur.dataLines.join('\n') };
        if (this.#cur.id !== undefined) e.id = this.#cur.id;
        if (this.#cur.event !== undefined) e.event = this.#cur.event;
        if (this.#cur.retry !== undefined) e.retry = this.#cur.retry;
        this.#queue.push(e);
      }
      this.#cur = { dataLines: [], any: false };
      return;
    }
    if (line.startsWith(':')) return; // a comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.#cur.any = true;
    if (field === 'data') this.#cur.dataLines.push(value);
    else if (field === 'id') this.#cur.id = value;
    else if (field === 'event') this.#cur.event = value;
    else if (field === 'retry') this.#cur.retry = Number(value);
  }
}

/** A streaming fetch with its own AbortController, so the test can always close what it opened. */
interface OpenStream {
  res: Response;
  ac: AbortController;
  sse: SseReader;
}

function parseData(e: SseEvent): Json {
  return JSON.parse(e.data) as Json;
}

const isResponseTo = (id: string | number) => (e: SseEvent) => e.data !== '' && (JSON.parse(e.data) as Json).id === id && !('method' in JSON.parse(e.data));

function assertSseHeaders(res: Response): void {
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.match(res.headers.get('cache-control') ?? '', /^no-cache/);
  // A stream a proxy must pass on as it comes says so; an answer whole in one write, with its length, has nothing to hold back.
  assert.equal(res.headers.get('x-accel-buffering'), res.headers.has('content-length') ? null : 'no');
  // The connection's own, as Node writes it for every answer (before 2026-12-07 a fixed keep-alive).
  assert.equal(res.headers.get('connection'), 'keep-alive');
  assert.match(res.headers.get('keep-alive') ?? '', /^timeout=\d+/);
}

/** POST a request and open its SSE answer stream (status and headers asserted). */
async function postStream(gw: RunningGateway, s: Session, body: unknown): Promise<OpenStream> {
  const ac = new AbortController();
  const res = await post(gw, body, { sid: s.sid, version: s.version, signal: ac.signal });
  if (res.status !== 200) {
    ac.abort();
    assert.fail(`expected an SSE stream, got HTTP ${res.status}`);
  }
  assertSseHeaders(res);
  return { res, ac, sse: new SseReader(res.body) };
}

/** POSTs a request, reads its stream's priming event (which has an id), then drops the stream mid-way. */
async function primeThenDrop(gw: RunningGateway, s: Session, body: unknown): Promise<SseEvent> {
  const st = await postStream(gw, s, body);
  try {
    const priming = await st.sse.next();
    assert.ok(priming?.id);
    return priming;
  } finally {
    st.ac.abort(); // the client drops mid-stream: not a cancellation
  }
}

/** GET on the Streamable HTTP endpoint, returning the raw response (the caller closes it via ac). */
async function getStream(gw: RunningGateway, headers: Record<string, string>): Promise<{ res: Response; ac: AbortController }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  try {
    const res = await fetch(gw.url('/mcp'), { method: 'GET', headers, signal: ac.signal });
    return { res, ac };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A POST written by hand on its own connection, its body sent chunked under the Transfer-Encoding given
 * (what fetch cannot send), answered as status and JSON body once the connection closes or the answer is whole.
 */
async function chunkedPost(gw: RunningGateway, path: string, transferEncoding: string, body: Buffer): Promise<{ status: number; body: Json }> {
  const c = await openRawSocket('127.0.0.1', Number(gw.url().port));
  try {
    const head = `POST ${path} HTTP/1.1\r\nHost: ${gw.url().host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: ${transferEncoding}\r\n\r\n`;
    c.socket.write(Buffer.concat([Buffer.from(`${head}${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]));
    const whole = () => /\r\n\r\n[\s\S]*\}$/.test(c.received());
    await waitFor(() => whole() || c.closed());
    const text = c.received();
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Json };
  } finally {
    c.socket.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------
// Streamable HTTP
// ---------------------------------------------------------------------------------------------------

describe('Streamable HTTP edge (/mcp, SSE responses)', () => {
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway(fixtureConfig({ maxBodyBytes: 2048, responseMode: 'sse' }));
  });
  after(async () => {
    await gw?.close();
  });

  describe('initialize', () => {
    it('answers 200 JSON with a visible-ASCII Mcp-Session-Id, serverInfo and capabilities', async () => {
      const res = await post(gw, initializeBody('2025-06-18', 'init-1'));
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const sid = res.headers.get('mcp-session-id');
      assert.ok(sid);
      assert.match(sid, VISIBLE_ASCII);
      const body = JSON.parse(text) as Json;
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, 'init-1');
      assert.equal(body.result.protocolVersion, '2025-06-18');
      assert.equal(body.result.serverInfo.name, 'switchboard');
      assert.equal(typeof body.result.capabilities, 'object');
      assert.ok(body.result.capabilities.tools, 'the fixture offers tools, so the gateway advertises them');
      assert.ok(body.result.capabilities.prompts);
      assert.ok(body.result.capabilities.resources);
    });

    it('answers an unknown protocol version with its latest, 2025-11-25', async () => {
      const res = await post(gw, initializeBody('1999-01-01', 2));
      const body = JSON.parse(await res.text()) as Json;
      assert.equal(res.status, 200);
      assert.equal(body.id, 2);
      assert.equal(body.result.protocolVersion, '2025-11-25');
      assert.match(res.headers.get('mcp-session-id') ?? '', VISIBLE_ASCII);
    });

    it('gives every session its own id', async () => {
      const a = await openSession(gw);
      const b = await openSession(gw);
      assert.notEqual(a.sid, b.sid);
    });

  });

  describe('POST responses', () => {
    it('a notification-only POST gets 202 with an empty body', async () => {
      const res = await post(gw, initializeBody('2025-11-25'));
      await res.text();
      const sid = res.headers.get('mcp-session-id')!;
      const note = await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid, version: '2025-11-25' });
      assert.equal(note.status, 202);
      assert.equal(await note.text(), '');
    });

    it('a response-only POST (an answer to nothing) gets 202 with an empty body', async () => {
      const s = await openSession(gw);
      const res = await post(gw, { jsonrpc: '2.0', id: 999, result: {} }, { sid: s.sid, version: s.version });
      assert.equal(res.status, 202);
      assert.equal(await res.text(), '');
    });

    it('2025-11-25: a request is answered on text/event-stream that starts with a priming event', async () => {
      const s = await openSession(gw, '2025-11-25');
      const st = await postStream(gw, s, { jsonrpc: '2.0', id: 'list-1', method: 'tools/list' });
      try {
        assert.equal(st.res.headers.get('mcp-session-id'), s.sid);
        const priming = await st.sse.next();
        assert.ok(priming);
        assert.ok(priming.id, 'the priming event carries an id');
        assert.match(priming.id, VISIBLE_ASCII);
        assert.equal(priming.data, '');
        // The reconnection delay the spec asks a server that may close a stream early to send (found by a
        // review: session.retryMs was passed to the transport and never written).
        assert.equal(priming.retry, 1000, 'the priming event carries a retry field');
        const answer = await st.sse.next();
        assert.ok(answer);
        const msg = parseData(answer);
        assert.equal(msg.jsonrpc, '2.0');
        assert.equal(msg.id, 'list-1');
        assert.ok(Array.isArray(msg.result.tools));
        assert.ok(msg.result.tools.some((t: Json) => t.name === 'test_simple_text'));
        assert.deepEqual(await st.sse.expectEnd(), [], 'the stream ends after the response');
      } finally {
        st.ac.abort();
      }
    });

    it('2025-06-18: the stream carries the response and no priming event', async () => {
      const s = await openSession(gw, '2025-06-18');
      const st = await postStream(gw, s, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } });
      try {
        const first = await st.sse.next();
        assert.ok(first);
        assert.notEqual(first.data, '', 'no empty-data priming event for a 2025-06-18 client');
        const msg = parseData(first);
        assert.equal(msg.id, 7);
        assert.equal(msg.result.content[0].type, 'text');
        assert.deepEqual(await st.sse.expectEnd(), []);
      } finally {
        st.ac.abort();
      }
    });

    it('a 2025-03-26 session accepts a batch and answers both requests', async () => {
      const s = await openSession(gw, '2025-03-26');
      assert.equal(s.version, '2025-03-26');
      const ac = new AbortController();
      try {
        const res = await post(gw, [{ jsonrpc: '2.0', id: 'b1', method: 'ping' }, { jsonrpc: '2.0', id: 'b2', method: 'tools/list' }, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }], { sid: s.sid, signal: ac.signal });
        assert.equal(res.status, 200);
        const type = res.headers.get('content-type') ?? '';
        let answers: Json[];
        if (type.startsWith('application/json')) {
          answers = JSON.parse(await res.text()) as Json[];
        } else {
          assertSseHeaders(res);
          const events = await new SseReader(res.body).expectEnd(5000);
          answers = events.filter((e) => e.data !== '').map(parseData);
        }
        const byId = new Map(answers.map((a) => [a.id, a]));
        assert.deepEqual(byId.get('b1')?.result, {});
        assert.ok(Array.isArray(byId.get('b2')?.result?.tools));
        assert.equal(answers.filter((a) => !('method' in a)).length, 2, 'exactly two responses');
      } finally {
        ac.abort();
      }
    });

    it('a 2025-03-26 batch that uses one id twice gets 400', async () => {
      const s = await openSession(gw, '2025-03-26');
      const res = await post(gw, [{ jsonrpc: '2.0', id: 'same', method: 'ping' }, { jsonrpc: '2.0', id: 'same', method: 'tools/list' }], { sid: s.sid });
      await expectRpcError(res, 400, { code: -32600, id: 'same' });
    });

    it('DELETE while a request is in flight: its POST stream gets an error response for it and ends', async () => {
      const s = await openSession(gw, '2025-11-25', { sampling: {} });
      const st = await postStream(gw, s, { jsonrpc: '2.0', id: 'doomed', method: 'tools/call', params: { name: 'test_sampling', arguments: { prompt: 'x' } } });
      try {
        await st.sse.until((e) => e.data !== '' && parseData(e).method === 'sampling/createMessage');
        const del = await fetch(gw.url('/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version }, signal: AbortSignal.timeout(10_000) });
        await del.text();
        assert.equal(del.status, 200);
        const events = await st.sse.until(isResponseTo('doomed'));
        expectRpcErrorObject(parseData(events[events.length - 1]!), 'doomed');
        await st.sse.expectEnd();
      } finally {
        st.ac.abort();
      }
    });

    it('a 2025-03-26 batch of notifications only gets 202', async () => {
      const s = await openSession(gw, '2025-03-26');
      const res = await post(gw, [{ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }], { sid: s.sid });
      assert.equal(res.status, 202);
      assert.equal(await res.text(), '');
    });

    it('reusing the id of a request still in flight gets 400 and the first request is still answered', async () => {
      // test_sampling waits for the client's sampling answer, so the request stays in flight until we answer.
      const s = await openSession(gw, '2025-11-25', { sampling: {} });
      const st = await postStream(gw, s, { jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'test_sampling', arguments: { prompt: 'hi' } } });
      try {
        const events = await st.sse.until((e) => e.data !== '' && parseData(e).method === 'sampling/createMessage');
        const samplingReq = parseData(events[events.length - 1]!);

        const dup = await post(gw, { jsonrpc: '2.0', id: 42, method: 'tools/list' }, { sid: s.sid, version: s.version });
        await expectRpcError(dup, 400, { code: -32600, id: 42 });

        // A different, free id is served meanwhile.
        const other = await postStream(gw, s, { jsonrpc: '2.0', id: 43, method: 'ping' });
        try {
          const got = await other.sse.until(isResponseTo(43));
          assert.deepEqual(parseData(got[got.length - 1]!).result, {});
        } finally {
          other.ac.abort();
        }

        const answer = await post(gw, { jsonrpc: '2.0', id: samplingReq.id, result: { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'test', stopReason: 'endTurn' } }, { sid: s.sid, version: s.version });
        assert.equal(answer.status, 202);
        await answer.text();
        const rest = await st.sse.until(isResponseTo(42));
        const final = parseData(rest[rest.length - 1]!);
        assert.equal(final.result.content[0].text, 'LLM response: hello');
        await st.sse.expectEnd();

        // Once answered, the id is free again.
        const again = await postStream(gw, s, { jsonrpc: '2.0', id: 42, method: 'ping' });
        try {
          await again.sse.until(isResponseTo(42));
        } finally {
          again.ac.abort();
        }
      } finally {
        st.ac.abort();
      }
    });

    it('reusing the id of a slow tool call (test_tool_with_progress) still in flight gets 400', async () => {
      const s = await openSession(gw, '2025-06-18');
      const st = await postStream(gw, s, { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {} } });
      try {
        const dup = await post(gw, { jsonrpc: '2.0', id: 'slow', method: 'ping' }, { sid: s.sid, version: s.version });
        await expectRpcError(dup, 400, { code: -32600, id: 'slow' });
        const got = await st.sse.until(isResponseTo('slow'));
        assert.equal(parseData(got[got.length - 1]!).result.content[0].text, 'Tool with progress executed successfully');
      } finally {
        st.ac.abort();
      }
    });

    it('a request before initialize completes (no notifications/initialized yet) is still served over Streamable HTTP', async () => {
      const res = await post(gw, initializeBody('2025-11-25', 1));
      await res.text();
      const sid = res.headers.get('mcp-session-id')!;
      const st = await postStream(gw, { sid, version: '2025-11-25', initResult: {} }, { jsonrpc: '2.0', id: 'early', method: 'ping' });
      try {
        const got = await st.sse.until(isResponseTo('early'));
        assert.deepEqual(parseData(got[got.length - 1]!).result, {});
      } finally {
        st.ac.abort();
      }
    });
  });

  describe('request bodies', () => {
    it('a body under a Transfer-Encoding other than chunked (gzip, chunked) gets 501 naming it, not a parse error of its bytes', async () => {
      const gz = gzipSync(JSON.stringify(initializeBody('2025-11-25')));
      for (const te of ['gzip, chunked', 'deflate, chunked']) {
        const r = await chunkedPost(gw, '/mcp', te, gz);
        assert.equal(r.status, 501, JSON.stringify(r.body));
        expectRpcErrorObject(r.body, null);
        assert.match(r.body.error.message, new RegExp(`Transfer-Encoding ${te.split(',')[0]}`));
      }
      assert.equal((await chunkedPost(gw, '/messages?sessionId=x', 'gzip, chunked', gz)).status, 501, 'the legacy message path too');
      const plain = await chunkedPost(gw, '/mcp', 'chunked', Buffer.from(JSON.stringify(initializeBody('2025-11-25'))));
      assert.equal(plain.status, 200, 'plain chunked bodies are read as before');
    });
  });

  describe('GET stream', () => {
    it('opens the standalone stream (200 text/event-stream); a second concurrent GET gets 409', async () => {
      const s = await openSession(gw, '2025-11-25');
      const first = await getStream(gw, { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version });
      try {
        assertSseHeaders(first.res);
        assert.equal(first.res.headers.get('mcp-session-id'), s.sid);
        const sse = new SseReader(first.res.body);
        const priming = await sse.next();
        assert.ok(priming?.id, 'a 2025-11-25 GET stream starts with a priming event');
        assert.equal(priming.data, '');

        const second = await getStream(gw, { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version });
        try {
          await expectRpcError(second.res, 409);
        } finally {
          second.ac.abort();
        }
      } finally {
        first.ac.abort();
      }
      // Once the first reader is gone a new GET may take over (bounded wait for the server to notice).
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        const again = await getStream(gw, { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version });
        status = again.res.status;
        again.ac.abort();
        if (status !== 200) await sleep(50);
      }
      assert.equal(status, 200, 'a GET after the first stream closed is accepted');
    });

  });

  describe('resumability', () => {
    it('a POST stream cut before its response is resumed by GET + Last-Event-ID, which delivers the rest and the response', async () => {
      // test_sampling blocks on our sampling answer, so the cut is certainly before the response.
      const s = await openSession(gw, '2025-11-25', { sampling: {} });
      const priming = await primeThenDrop(gw, s, { jsonrpc: '2.0', id: 'r1', method: 'tools/call', params: { name: 'test_sampling', arguments: { prompt: 'resume me' } } });
      assert.equal(priming.data, '');
      const primingId = priming.id!;
      await logged(gw, s.sid, primingId, (m) => m.method === 'sampling/createMessage'); // produced while the client is away
      const resumed = await getStream(gw, { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version, 'last-event-id': primingId });
      try {
        assertSseHeaders(resumed.res);
        const sse = new SseReader(resumed.res.body);
        const upTo = await sse.until((e) => e.data !== '' && parseData(e).method === 'sampling/createMessage');
        const samplingReq = parseData(upTo[upTo.length - 1]!);
        assert.equal(samplingReq.params.messages[0].content.text, 'resume me');
        for (const e of upTo) if (e.data !== '') assert.ok(e.id, 'replayed events carry ids');

        const answer = await post(gw, { jsonrpc: '2.0', id: samplingReq.id, result: { role: 'assistant', content: { type: 'text', text: 'resumed' }, model: 'test' } }, { sid: s.sid, version: s.version });
        assert.equal(answer.status, 202);
        await answer.text();

        const rest = await sse.until(isResponseTo('r1'));
        const final = rest[rest.length - 1]!;
        assert.ok(final.id, 'the response event has an id');
        assert.equal(parseData(final).result.content[0].text, 'LLM response: resumed');
        await sse.expectEnd();
      } finally {
        resumed.ac.abort();
      }
    });

    it('a slow tool (test_tool_with_progress) cut after its priming event: GET + Last-Event-ID replays progress and the response', async () => {
      const s = await openSession(gw, '2025-11-25');
      const primingId = (await primeThenDrop(gw, s, { jsonrpc: '2.0', id: 'p1', method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'tok' } } })).id!;
      const resumed = await getStream(gw, { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version, 'last-event-id': primingId });
      try {
        assertSseHeaders(resumed.res);
        const sse = new SseReader(resumed.res.body);
        const events = await sse.until(isResponseTo('p1'));
        const msgs = events.filter((e) => e.data !== '').map(parseData);
        const progress = msgs.filter((m) => m.method === 'notifications/progress');
        assert.deepEqual(progress.map((m) => m.params.progress), [0, 50, 100]);
        assert.ok(progress.every((m) => m.params.progressToken === 'tok'), 'the client sees its own progress token');
        assert.equal(msgs[msgs.length - 1]!.result.content[0].text, 'Tool with progress executed successfully');
        const ids = events.map((e) => e.id);
        assert.equal(new Set(ids).size, ids.length, 'event ids are unique');
        await sse.expectEnd();
      } finally {
        resumed.ac.abort();
      }
    });

    it(
      'resuming a POST stream whose response was produced while the client was away replays it and then ends the stream',
      async () => {
        const s = await openSession(gw, '2025-11-25');
        const primingId = (await primeThenDrop(gw, s, { jsonrpc: '2.0', id: 'late', method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 7 } } })).id!;
        await logged(gw, s.sid, primingId, (m) => m.id === 'late'); // its response is produced while no one reads the stream
        const resumed = await getStream(gw, { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version, 'last-event-id': primingId });
        try {
          assertSseHeaders(resumed.res);
          const sse = new SseReader(resumed.res.body);
          const events = await sse.until(isResponseTo('late'));
          assert.equal(parseData(events[events.length - 1]!).result.content[0].text, 'Tool with progress executed successfully');
          await sse.expectEnd(2000);
        } finally {
          resumed.ac.abort();
        }
      },
    );
  });
});

describe('Streamable HTTP edge with server.responseMode: json', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway(fixtureConfig({ responseMode: 'json' }));
  });
  after(async () => {
    await gw?.close();
  });

  it('answers a request POST with one application/json body', async () => {
    const s = await openSession(gw, '2025-11-25');
    const res = await post(gw, { jsonrpc: '2.0', id: 'j1', method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }, { sid: s.sid, version: s.version });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('mcp-session-id'), s.sid);
    const body = JSON.parse(text) as Json;
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, 'j1');
    assert.equal(body.result.content[0].type, 'text');
  });

  it('answers a slow tool with one JSON body once it is done', async () => {
    const s = await openSession(gw, '2025-06-18');
    const res = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {} } }, { sid: s.sid, version: s.version });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(JSON.parse(text).result.content[0].text, 'Tool with progress executed successfully');
  });

  it('answers a 2025-03-26 batch with a JSON array holding both responses', async () => {
    const s = await openSession(gw, '2025-03-26');
    const res = await post(gw, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' }], { sid: s.sid });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const arr = JSON.parse(text) as Json[];
    assert.ok(Array.isArray(arr));
    assert.equal(arr.length, 2);
    const byId = new Map(arr.map((a) => [a.id, a]));
    assert.deepEqual(byId.get(1)?.result, {});
    assert.ok(Array.isArray(byId.get(2)?.result?.tools));
  });
});

describe('Streamable HTTP edge with server.responseMode: auto (the default)', () => {
  let gw: RunningGateway;
  let quick: RunningGateway;
  before(async () => {
    // A hold far longer than any call here: whether an answer streams depends only on what it carries.
    gw = await startGateway(fixtureConfig({ responseHoldMs: 10_000 }));
    // A hold shorter than the fixture's 100 ms tool: its answer must become a stream.
    quick = await startGateway(fixtureConfig({ responseHoldMs: 1 }));
  });
  after(async () => {
    await gw?.close();
    await quick?.close();
  });

  it('is the default', () => {
    assert.equal(parseConfig(fixtureConfig(), 'test', {}).server.responseMode, 'auto');
  });

  it('answers a call whose result comes before anything needs streaming with one JSON body', async () => {
    const s = await openSession(gw, '2025-11-25');
    const res = await post(gw, { jsonrpc: '2.0', id: 'a1', method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {} } }, { sid: s.sid, version: s.version });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('mcp-session-id'), s.sid);
    assert.equal(JSON.parse(text).result.content[0].text, 'Tool with progress executed successfully');
  });

  it('streams an answer once a progress notification for it arrives: priming event, progress, result', async () => {
    const s = await openSession(gw, '2025-11-25');
    const st = await postStream(gw, s, { jsonrpc: '2.0', id: 'a2', method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p1' } } });
    try {
      const priming = await st.sse.next();
      assert.ok(priming?.id, 'the stream opens with a priming event that has an id');
      assert.equal(priming.data, '');
      const events = await st.sse.until(isResponseTo('a2'));
      const progress = events.filter((e) => parseData(e).method === 'notifications/progress').map((e) => parseData(e).params.progress);
      assert.deepEqual(progress, [0, 50, 100]);
      assert.ok(events.every((e) => e.id), 'every event has an id (resumable)');
      assert.equal(parseData(events.at(-1)!).result.content[0].text, 'Tool with progress executed successfully');
      assert.deepEqual(await st.sse.expectEnd(), []);
    } finally {
      st.ac.abort();
    }
  });

  it('a 2025-06-18 session gets the stream without a priming event', async () => {
    const s = await openSession(gw, '2025-06-18');
    const st = await postStream(gw, s, { jsonrpc: '2.0', id: 'a3', method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p2' } } });
    try {
      const first = await st.sse.next();
      assert.equal(parseData(first!).method, 'notifications/progress');
      await st.sse.until(isResponseTo('a3'));
    } finally {
      st.ac.abort();
    }
  });

  it('an answer that outlasts the hold becomes a stream (headers and priming event first), and it can be resumed', async () => {
    const s = await openSession(quick, '2025-11-25');
    const st = await postStream(quick, s, { jsonrpc: '2.0', id: 'a4', method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {} } });
    const priming = await st.sse.next();
    assert.ok(priming?.id);
    assert.equal(priming.data, '');
    st.ac.abort(); // the reader goes away before the answer; the answer is logged for a resuming GET
    const resumed = await fetch(quick.url('/mcp'), {
      headers: { accept: 'text/event-stream', 'mcp-session-id': s.sid, 'mcp-protocol-version': s.version, 'last-event-id': priming.id },
    });
    assert.equal(resumed.status, 200);
    const events = await new SseReader(resumed.body).until(isResponseTo('a4'));
    assert.equal(parseData(events.at(-1)!).result.content[0].text, 'Tool with progress executed successfully');
  });

  it('answers a 2025-03-26 batch with a JSON array when all answers come within the hold', async () => {
    const s = await openSession(gw, '2025-03-26');
    const res = await post(gw, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' }], { sid: s.sid });
    const text = await res.text();
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const arr = JSON.parse(text) as Json[];
    assert.deepEqual(arr.map((a) => a.id).sort(), [1, 2]);
  });
});

// ---------------------------------------------------------------------------------------------------
// Legacy HTTP+SSE
// ---------------------------------------------------------------------------------------------------

describe('legacy HTTP+SSE edge (/sse + /messages)', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway(fixtureConfig());
  });
  after(async () => {
    await gw?.close();
  });

  interface LegacySession {
    ac: AbortController;
    res: Response;
    sse: SseReader;
    endpoint: string;
  }

  async function openLegacy(): Promise<LegacySession> {
    const ac = new AbortController();
    const res = await fetch(gw.url('/sse'), { headers: { accept: 'text/event-stream' }, signal: ac.signal });
    try {
      assertSseHeaders(res);
      const sse = new SseReader(res.body);
      const first = await sse.next();
      assert.ok(first);
      assert.equal(first.event, 'endpoint');
      assert.match(first.data, /^\/messages\?sessionId=[\x21-\x7e]+$/);
      return { ac, res, sse, endpoint: first.data };
    } catch (err) {
      ac.abort();
      throw err;
    }
  }

  function postLegacy(path: string, body: unknown, contentType = 'application/json'): Promise<Response> {
    return fetch(new URL(path, gw.base), {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  }

  /** The next `event: message` on the stream, parsed. */
  async function nextMessage(l: LegacySession): Promise<Json> {
    const events = await l.sse.until((e) => e.event === 'message');
    return parseData(events[events.length - 1]!);
  }

  async function accepted(res: Response): Promise<void> {
    const text = await res.text();
    assert.equal(res.status, 202, text);
  }

  it('GET /sse sends `event: endpoint`; POSTs get 202 and the answers arrive as `event: message`', async () => {
    const l = await openLegacy();
    try {
      await accepted(await postLegacy(l.endpoint, initializeBody('2024-11-05', 'i1')));
      const init = await nextMessage(l);
      assert.equal(init.jsonrpc, '2.0');
      assert.equal(init.id, 'i1');
      assert.equal(init.result.protocolVersion, '2024-11-05');
      assert.equal(init.result.serverInfo.name, 'switchboard');
      assert.ok(init.result.capabilities.tools);

      await accepted(await postLegacy(l.endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }));
      await accepted(await postLegacy(l.endpoint, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }));
      const call = await nextMessage(l);
      assert.equal(call.id, 2);
      assert.equal(call.result.content[0].type, 'text');
    } finally {
      l.ac.abort();
    }
  });

  it('a request other than initialize/ping before initialize gets a -32600 error on the stream; ping is answered', async () => {
    const l = await openLegacy();
    try {
      await accepted(await postLegacy(l.endpoint, { jsonrpc: '2.0', id: 'early', method: 'tools/list' }));
      expectRpcErrorObject(await nextMessage(l), 'early', -32600);

      await accepted(await postLegacy(l.endpoint, { jsonrpc: '2.0', id: 'p', method: 'ping' }));
      const pong = await nextMessage(l);
      assert.equal(pong.id, 'p');
      assert.deepEqual(pong.result, {});

      // And after initialize the same method works.
      await accepted(await postLegacy(l.endpoint, initializeBody('2024-11-05', 'i')));
      assert.equal((await nextMessage(l)).id, 'i');
      await accepted(await postLegacy(l.endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }));
      await accepted(await postLegacy(l.endpoint, { jsonrpc: '2.0', id: 'later', method: 'tools/list' }));
      const list = await nextMessage(l);
      assert.equal(list.id, 'later');
      assert.ok(Array.isArray(list.result.tools));
    } finally {
      l.ac.abort();
    }
  });

  it('POST with malformed JSON gets 400 / -32700', async () => {
    const l = await openLegacy();
    try {
      const res = await postLegacy(l.endpoint, '{"jsonrpc":');
      await expectRpcError(res, 400, { code: -32700, id: null });
    } finally {
      l.ac.abort();
    }
  });

  it('POST with an invalid JSON-RPC message gets 400 / -32600', async () => {
    const l = await openLegacy();
    try {
      const res = await postLegacy(l.endpoint, { jsonrpc: '1.0', id: 4, method: 'ping' });
      await expectRpcError(res, 400, { code: -32600, id: 4 });
    } finally {
      l.ac.abort();
    }
  });

  it('POST with Content-Type text/plain gets 415', async () => {
    const l = await openLegacy();
    try {
      const res = await postLegacy(l.endpoint, { jsonrpc: '2.0', id: 1, method: 'ping' }, 'text/plain');
      await expectRpcError(res, 415);
    } finally {
      l.ac.abort();
    }
  });

  it('closing the stream ends the session: its POST URL then gets 404', async () => {
    const l = await openLegacy();
    l.ac.abort();
    let status = 0;
    for (let i = 0; i < 40; i++) {
      const res = await postLegacy(l.endpoint, { jsonrpc: '2.0', id: 1, method: 'ping' });
      status = res.status;
      await res.text();
      if (status === 404) break;
      await sleep(50);
    }
    assert.equal(status, 404);
  });
});
