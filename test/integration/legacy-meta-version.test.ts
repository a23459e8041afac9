/**
 * A 2025-era client's request whose `_meta` names a protocol version (the 2026-07-28 key, any value: the
 * client writes `_meta` whole). Forwarded to a legacy HTTP upstream, it must go over the upstream's own
 * session, with headers the gateway chose: it was posted as a sessionless 2026-07-28 request with
 * `MCP-Protocol-Version` copied from the client (a value with CR/LF made undici throw), the upstream
 * refused it, and each refusal counted against the circuit every client shares.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startSdkUpstream, type SdkUpstream } from '../helpers/sdk-http-upstream.js';
import { connectClient, textOf } from '../helpers/sdk.js';

const META = 'io.modelcontextprotocol/protocolVersion';

describe("a legacy client's _meta naming a protocol version, to a legacy HTTP upstream", () => {
  let upstream: SdkUpstream;
  let gw: RunningGateway;
  before(async () => {
    upstream = await startSdkUpstream((s) => {
      s.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }));
    });
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'legacy', transport: 'streamable-http', url: upstream.url, sharing: 'shared', pool: { size: 1 }, circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 600_000 } }],
      endpoints: [{ path: '/mcp', upstreams: ['legacy'] }],
    });
  });
  after(async () => {
    await gw.close();
    upstream.close();
  });

  it('reaches the upstream over its session, and opens no circuit for the other clients', async () => {
    const hostile = await connectClient(gw, 'sse');
    const other = await connectClient(gw, 'streamable-http');
    try {
      const answers: string[] = [];
      for (const version of ['2026-07-28', 'x\r\nx-injected: 1', '2026-07-28']) {
        const r = await hostile.callTool({ name: 'echo', arguments: { text: 'hi' }, _meta: { [META]: version } }).then(
          (v) => textOf(v),
          (e: Error) => e.message,
        );
        answers.push(r);
      }
      assert.deepEqual(answers, ['echo: hi', 'echo: hi', 'echo: hi']);
      const r = await other.callTool({ name: 'echo', arguments: { text: 'there' } });
      assert.equal(textOf(r), 'echo: there');
    } finally {
      await hostile.close();
      await other.close();
    }
  });
});
