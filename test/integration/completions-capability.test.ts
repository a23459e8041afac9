// completion/complete completes a prompt's or a resource template's arguments. A tenant whose rules allow
// no prompt and no resource cannot use it, yet `completions` stayed advertised (to a 2025 session's
// initialize and a 2026-07-28 server/discover) when prompts and resources were left out: a client offered
// completions for nothing. It is now left out with them; a tenant that sees either keeps it. The
// conformance fixture (tools, prompts, resources and templates, with completions) over stdio.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';

const fixture = { name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const };

/** The capabilities a 2025 session's initialize and a 2026-07-28 server/discover show the (anonymous) tenant. */
async function shown(gw: RunningGateway): Promise<{ session: Record<string, unknown>; discover: Record<string, unknown> }> {
  const client = new Client({ name: 'completions-capability-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp')));
  try {
    const discover = await modernPost(gw.url('/mcp'), 'server/discover', {});
    return { session: client.getServerCapabilities() ?? {}, discover: discover.body.result.capabilities };
  } finally {
    await client.close();
  }
}

type Rules = { prompts?: { allow: string[] }; resources?: { allow: string[] } };
const CASES: Array<[Rules, boolean]> = [
  [{ prompts: { allow: [] }, resources: { allow: [] } }, false],
  [{ prompts: { allow: [] } }, true],
];

for (const [rules, kept] of CASES) {
  describe(`completions for a tenant that may see ${kept ? 'resources, no prompt' : 'no prompt and no resource'}`, { timeout: 60_000 }, () => {
    let gw: RunningGateway;
    before(async () => {
      // auth mode none: every caller is tenant "anonymous".
      gw = await startGateway({ upstreams: [fixture], endpoints: [{ path: '/mcp', upstreams: ['fixture'] }], tenants: [{ name: 'anonymous', endpoints: ['*'], ...rules }] });
    });
    after(() => gw?.close());

    it(kept ? 'are advertised: its templates complete' : 'are not advertised, in either era', async () => {
      const { session, discover } = await shown(gw);
      for (const caps of [session, discover]) {
        assert.ok(caps.tools, JSON.stringify(caps));
        assert.equal(caps.prompts, undefined, JSON.stringify(caps));
        assert.equal(caps.completions !== undefined, kept, JSON.stringify(caps));
      }
    });
  });
}
