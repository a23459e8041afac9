// A Last-Event-ID of the right form naming no stream is refused quoting it cut, as a malformed one is: the
// refusal is also the edge's "request refused" log line, and the header is the client's, up to Node's
// 16 KiB header limit (digits match the form). Real HTTP on a real port.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { expectRpcError, fixtureConfig, openSession } from '../helpers/http-edge.js';

describe('a long Last-Event-ID', () => {
  let gw: RunningGateway;
  const lines: string[] = [];
  before(async () => {
    gw = await startGateway({ ...fixtureConfig(), tenants: [{ name: 'anonymous', endpoints: ['*'] }] }, { logLines: lines });
  });
  after(() => gw.close());

  it('naming no stream is refused quoting it cut, in the answer and the log', async () => {
    const { sid } = await openSession(gw);
    const id = `7_${'9'.repeat(8000)}`;
    const res = await fetch(gw.url(), { headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'last-event-id': id } });
    const body = await expectRpcError(res, 400);
    assert.match(body.error.message, /names no stream/);
    assert.ok(body.error.message.length < 300, `quoted cut: ${body.error.message.length} characters`);
    assert.ok(Math.max(...lines.map((l) => l.length)) < 4000, 'no log line carries the header whole');
  });
});
