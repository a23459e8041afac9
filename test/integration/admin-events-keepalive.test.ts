// The console's event stream (GET /events on the admin listener) sends a view only when it changes: on a
// quiet gateway nothing went out for as long as nothing changed, and a proxy or load balancer with an
// idle timeout in front of the console (nginx's 60 s proxy_read_timeout, a cloud LB's) cut it, the console
// reconnecting over and over. It now sends an SSE comment every server.keepAliveMs, as the MCP streams
// do, while a console is open. Real gateway, real admin listener, the stream read raw (comments included).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';

const TOKEN = 'keepalive-admin-token-0123456789-abcdefg';

describe('admin /events keep-alive', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      server: { keepAliveMs: 1000 },
      admin: { enabled: true, port: 0, token: TOKEN },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => gw?.close());

  /** Reads the stream's raw text until `done` holds (or the 20 s signal ends the read: then `done` does not hold). */
  async function readUntil(done: (text: string) => boolean): Promise<string> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 20_000);
    let text = '';
    try {
      const res = await fetch(new URL('/events', gw.app.adminUrl), { headers: { authorization: `Bearer ${TOKEN}` }, signal: abort.signal });
      assert.equal(res.status, 200);
      const decoder = new TextDecoder();
      for await (const chunk of res.body!) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        if (done(text)) break;
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
    return text;
  }

  it('a quiet stream gets a comment line every keepAliveMs, after its views', async () => {
    const beats = (text: string) => text.split('\n\n').filter((block) => block === ': keepalive').length;
    const text = await readUntil((t) => t.includes('event: pins') && beats(t) >= 2);
    assert.ok(text.includes('event: pins'), 'the views came first');
    assert.ok(beats(text) >= 2, `two keep-alive comments within 20 s at 1 s intervals; got: ${JSON.stringify(text.slice(-300))}`);
  });

  it('a console that reconnects after the last one left gets them again (the timer restarts with it)', async () => {
    const text = await readUntil((t) => t.includes('\n\n: keepalive\n\n'));
    assert.ok(text.includes('\n\n: keepalive\n\n'), 'a keep-alive comment on the second stream');
  });
});
