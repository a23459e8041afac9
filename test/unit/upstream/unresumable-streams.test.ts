// A 2025-era call whose POST stream ends before its answer is resumed with Last-Event-ID
// (stream-resumption.test.ts). When it cannot be (the stream carried no event id, or the upstream refuses
// the resume), no answer can come any more: the call fails at once, not at its request timeout.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { callFailure as failure } from '../../helpers/sdk-http-upstream.js';
import { sessionPost } from '../../helpers/session-post.js';

const INIT_RESULT = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } };

/**
 * A 2025-era upstream (no GET stream: 405) whose tools/call answers on an SSE stream that `cut` ends before
 * the answer; a resume (GET with Last-Event-ID) is answered `resumeStatus`.
 */
async function upstream(cut: (res: ServerResponse, id: number) => void, resumeStatus = 405): Promise<{ url: string; close(): void; resumes: () => number }> {
  let resumes = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      if (req.headers['last-event-id'] !== undefined) resumes++;
      return void res.writeHead(req.headers['last-event-id'] !== undefined ? resumeStatus : 405).end();
    }
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    sessionPost(req, res, (m) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      cut(res, m.id);
    }, INIT_RESULT);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    resumes: () => resumes,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const progress = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } });

describe('a 2025-era call whose POST stream ends before its answer and cannot be resumed (found by a review)', () => {
  it('a stream that carried no event id: the call fails at once with SWB_UPSTREAM_UNAVAILABLE, not at its timeout', async () => {
    // A message on the stream, then its end (a restart, a proxy's cut): with no id there is nothing to resume from.
    const up = await upstream((res) => res.end(`data: ${progress}\n\n`));
    try {
      const f = await failure(up.url);
      assert.equal(f.code, 'SWB_UPSTREAM_UNAVAILABLE', f.message);
      assert.match(f.message, /ended the stream of request \d+ before answering it.*no event id/);
      assert.equal(up.resumes(), 0);
    } finally {
      up.close();
    }
  });

  it('a stream the upstream refuses to resume (HTTP 400): the call fails at once, naming the status', async () => {
    const up = await upstream((res) => res.end(`id: e1\ndata: ${progress}\n\n`), 400);
    try {
      const f = await failure(up.url);
      assert.equal(f.code, 'SWB_UPSTREAM_UNAVAILABLE', f.message);
      assert.match(f.message, /HTTP 400/);
      assert.equal(f.details?.httpStatus, 400);
      assert.equal(up.resumes(), 1);
    } finally {
      up.close();
    }
  });
});
