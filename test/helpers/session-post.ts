import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a fake upstream's POST carried, read as JSON-RPC. */
export type Posted = { id?: number; method: string };

const INIT_RESULT = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } };

/**
 * A POST to a fake 2025-era Streamable HTTP upstream whose session is `s1`: the body is read, a
 * notification accepted (202) and initialize answered in JSON with `init`; any other request goes to
 * `onRequest`, its response not yet begun.
 */
export function sessionPost(req: IncomingMessage, res: ServerResponse, onRequest: (m: Posted & { id: number }, res: ServerResponse) => void, init: object = INIT_RESULT): void {
  let body = '';
  req.on('data', (c: Buffer) => (body += c));
  req.on('end', () => {
    const m = JSON.parse(body) as Posted;
    if (m.id === undefined) return void res.writeHead(202, { 'mcp-session-id': 's1' }).end();
    if (m.method === 'initialize') {
      return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: init }));
    }
    onRequest(m as Posted & { id: number }, res);
  });
}
