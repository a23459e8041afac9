/**
 * The clients of `bench:paired`: each opens what its era needs on a connection pool and returns one
 * call (tools/call echo "hello"), checked, so that a build that answers wrongly cannot look cheap.
 */
import type { Pool } from 'undici';

/** json, auto, sse: a 2025-11-25 session whose gateway answers in that `responseMode`. */
export type Mode = 'json' | 'auto' | 'sse' | 'legacy' | 'modern';

const ECHO = { name: 'echo', arguments: { message: 'hello' } };
let nextId = 1;

async function expectHello(body: { text(): Promise<string> }): Promise<void> {
  const t = await body.text();
  if (!t.includes('hello')) throw new Error(`unexpected answer: ${t.slice(0, 200)}`);
}

async function sessionCaller(pool: Pool, extra: Readonly<Record<string, string>>): Promise<() => Promise<void>> {
  const headers = { ...extra, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
  const init = await pool.request({ path: '/mcp', method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'paired', version: '1' } } }) });
  await init.body.text();
  const h = { ...headers, 'mcp-session-id': String(init.headers['mcp-session-id']) };
  await (await pool.request({ path: '/mcp', method: 'POST', headers: h, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).body.text();
  return async () => expectHello((await pool.request({ path: '/mcp', method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: ECHO }) })).body);
}

function modernCaller(pool: Pool, extra: Readonly<Record<string, string>>): () => Promise<void> {
  const headers = { ...extra, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };
  const _meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  return async () => expectHello((await pool.request({ path: '/mcp', method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { ...ECHO, _meta } }) })).body);
}

/** HTTP+SSE: answers arrive on the session's one stream, matched by id. */
async function legacyCaller(pool: Pool, extra: Readonly<Record<string, string>>): Promise<() => Promise<void>> {
  const sse = await pool.request({ path: '/sse', method: 'GET', headers: { ...extra, accept: 'text/event-stream' } });
  const waiting = new Map<number, (text: string) => void>();
  let endpoint!: (url: string) => void;
  const url = new Promise<string>((r) => (endpoint = r));
  let buf = '';
  sse.body.setEncoding('utf8');
  sse.body.on('data', (chunk: string) => {
    buf += chunk;
    for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.replace(/^data: ?/, '')).join('\n');
      if (/^event: ?endpoint$/m.test(block)) endpoint(data);
      else if (data) waiting.get((JSON.parse(data) as { id: number }).id)?.(data);
    }
  });
  const path = await url;
  const post = async (msg: { id?: number; [k: string]: unknown }): Promise<string | undefined> => {
    const answered = msg.id === undefined ? undefined : new Promise<string>((r) => waiting.set(msg.id as number, r));
    await (await pool.request({ path, method: 'POST', headers: { ...extra, 'content-type': 'application/json' }, body: JSON.stringify(msg) })).body.text();
    return answered;
  };
  await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'paired', version: '1' } } });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return async () => {
    const id = nextId++;
    const text = await post({ jsonrpc: '2.0', id, method: 'tools/call', params: ECHO });
    waiting.delete(id);
    if (!text?.includes('hello')) throw new Error(`unexpected answer: ${text?.slice(0, 200)}`);
  };
}

/** The call one client of this mode makes, after whatever set-up its era needs; `extra` headers go on every request (a bearer token). */
export async function caller(pool: Pool, mode: Mode, extra: Readonly<Record<string, string>> = {}): Promise<() => Promise<void>> {
  return mode === 'legacy' ? legacyCaller(pool, extra) : mode === 'modern' ? modernCaller(pool, extra) : sessionCaller(pool, extra);
}
