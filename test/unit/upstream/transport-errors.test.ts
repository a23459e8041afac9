import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { TransportError, type Transport } from '../../../src/transport/transport.js';
import { UpstreamClient } from '../../../src/upstream/upstream-client.js';

const logger = createLogger('silent');
const OPTS = { timeoutMs: 5000, maxTimeoutMs: 5000 };

/** A link whose sends fail with a chosen error, and that can be closed with a reason. */
class FailingTransport implements Transport {
  error: Error | undefined;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: (reason?: TransportError) => void;
  async start(): Promise<void> {}
  async send(): Promise<void> {
    if (this.error) throw this.error;
  }
  release(): void {}
  async close(): Promise<void> {}
}

function setup() {
  const t = new FailingTransport();
  const client = new UpstreamClient('remote', t, logger, { resolveCaller: () => undefined, onNotification: () => {} });
  return { t, client };
}

const coded = (code: string, fragment: string) => (err: unknown) => err instanceof GatewayError && err.code === code && err.message.includes(fragment);

describe('UpstreamClient: link failures are told apart by code, not by name or message', () => {
  it('a send failing with a session-expired TransportError is SWB_UPSTREAM_SESSION_EXPIRED', async () => {
    const { t, client } = setup();
    t.error = new TransportError('session-expired', 'the upstream forgot us');
    await assert.rejects(client.request('tools/list', undefined, OPTS), coded('SWB_UPSTREAM_SESSION_EXPIRED', 'the upstream forgot us'));
  });

  it('an untyped error merely named SessionExpiredError is just an unreachable upstream', async () => {
    const { t, client } = setup();
    const err = new Error('HTTP 404');
    err.name = 'SessionExpiredError';
    t.error = err;
    await assert.rejects(client.request('tools/list', undefined, OPTS), coded('SWB_UPSTREAM_UNAVAILABLE', 'could not be reached: HTTP 404'));
  });

  it('a close with a reason fails requests in flight saying why', async () => {
    const { t, client } = setup();
    const p = client.request('tools/call', { name: 'x' }, OPTS);
    t.onclose!(new TransportError('message-too-large', 'it flooded its stdout'));
    await assert.rejects(p, coded('SWB_UPSTREAM_CRASHED', 'upstream "remote": it flooded its stdout'));
  });
});
