// An HTTP upstream that refuses a call (HTTP 500, or a 400 that reads as a malformed request) has the start
// of its body quoted in the gateway's error (SWB_UPSTREAM_UNAVAILABLE, SWB_UPSTREAM_REQUEST_REFUSED), which a
// host shows the model as the call's outcome, as it shows a JSON-RPC error's. Before 2026-12-08 such an error
// was the gateway's own and passed hidden-text scanning unscanned: a server put there what strip would have
// cleaned from its result, or block refused. Now scanned as an upstream's error is.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { gatewayWithClients } from '../helpers/gateway-clients.js';
import { HIDDEN_TEXT, resultsScanning } from '../helpers/hidden-text-fixture.js';
import { startRemoteFixture, type RemoteFixture } from '../helpers/remote-fixture.js';

type Json = Record<string, any>;
const F = HIDDEN_TEXT;

describe('hidden-text scanning of an upstream HTTP refusal quoted in the gateway error', () => {
  let fx: RemoteFixture;
  let url = '';
  before(async () => {
    fx = await startRemoteFixture('--refusing');
    url = `${fx.base}/mcp`;
  });
  after(() => void fx?.child.kill('SIGKILL'));
  // The url is known only once the fixture listens: read when the gateway starts (after the before above).
  const upstream = { name: 'remote', transport: 'streamable-http' as const, get url() { return url; }, healthCheck: { intervalMs: 0 }, circuitBreaker: { failureThreshold: 1000, resetTimeoutMs: 500 } };
  const rig = gatewayWithClients({
    upstreams: [upstream],
    endpoints: ['off', 'strip', 'block'].map((a) => (a === 'off' ? { path: '/off', upstreams: ['remote'] } : { path: `/${a}`, upstreams: ['remote'], ...resultsScanning(a as 'strip' | 'block') })),
  });
  /** The error a call of refuse answered with `status` and `body` brings a client of `path`. */
  const refusal = async (path: string, status: number, body: string): Promise<McpError> => {
    const err = await rig.clients[path]!.callTool({ name: 'refuse', arguments: { status, body } }).then(
      (r) => assert.fail(`answered ${JSON.stringify(r)}`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof McpError, String(err));
    return err;
  };
  const codeOf = (err: McpError) => (err.data as Json | undefined)?.code;

  it('off relays the quoted body as it came', async () => {
    const err = await refusal('/off', 500, F.samples.tag);
    assert.equal(codeOf(err), 'SWB_UPSTREAM_UNAVAILABLE');
    assert.ok(err.message.includes(F.samples.tag), err.message);
  });

  it('strip relays the error with the quoted body cleaned, its code kept', async () => {
    const err = await refusal('/strip', 500, F.samples.tag);
    assert.equal(codeOf(err), 'SWB_UPSTREAM_UNAVAILABLE');
    assert.ok(err.message.includes(`${F.samples.none}`) && !/[\u{E0000}-\u{E007F}]/u.test(err.message), err.message);
    const refused = await refusal('/strip', 400, `Invalid params: ${F.samples.pattern}`);
    assert.equal(codeOf(refused), 'SWB_UPSTREAM_REQUEST_REFUSED');
    assert.ok(!/ignore all previous/i.test(refused.message) && refused.message.includes('[removed]'), refused.message);
    const audited = rig.lines.map((l) => JSON.parse(l) as Json).filter((l) => l.event === 'hidden_text' && l.endpoint === '/strip');
    assert.deepEqual(audited.map((l) => [l.item, l.action, l.upstream, l.findings.map((f: Json) => `${f.kind} ${f.path}`)]), [
      ['tool', 'strip', 'remote', ['tag error.message']],
      ['tool', 'strip', 'remote', ['pattern error.message']],
    ]);
  });

  it('block replaces it with SWB_HIDDEN_TEXT_BLOCKED', async () => {
    const err = await refusal('/block', 500, F.samples.bidi);
    assert.equal(codeOf(err), 'SWB_HIDDEN_TEXT_BLOCKED');
    assert.ok(!err.message.includes(F.samples.bidi), err.message);
    // A refusal with nothing hidden passes as it is.
    assert.equal(codeOf(await refusal('/block', 500, F.samples.none)), 'SWB_UPSTREAM_UNAVAILABLE');
  });
});

// search_tools (a search-mode endpoint) is a tools/call the gateway answers from its upstreams' tool lists, and
// fails as an aggregated list does: with an upstream's own error when none listed. That error is the call's
// answer, which a host shows the model; before 2026-12-08 it was answered before hidden-text scanning and
// passed unscanned, whatever `results` said.
describe("hidden-text scanning of an upstream's list error answering search_tools", () => {
  let fx: RemoteFixture;
  let url = '';
  before(async () => {
    fx = await startRemoteFixture();
    await fx.control('list-error', { text: F.samples.tag });
    url = `${fx.base}/mcp`;
  });
  after(() => void fx?.child.kill('SIGKILL'));
  const upstream = { name: 'remote', transport: 'streamable-http' as const, get url() { return url; }, healthCheck: { intervalMs: 0 }, circuitBreaker: { failureThreshold: 1000, resetTimeoutMs: 500 } };
  const search = { exposure: 'search' as const };
  const rig = gatewayWithClients({
    upstreams: [upstream],
    endpoints: [
      { path: '/off', upstreams: ['remote'], tools: search },
      { path: '/strip', upstreams: ['remote'], tools: search, ...resultsScanning('strip') },
      { path: '/block', upstreams: ['remote'], tools: search, ...resultsScanning('block') },
    ],
  });
  const searched = async (path: string): Promise<McpError> => {
    const err = await rig.clients[path]!.callTool({ name: 'search_tools', arguments: { query: 'echo' } }).then(
      (r) => assert.fail(`answered ${JSON.stringify(r)}`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof McpError, String(err));
    return err;
  };

  it('off relays it as it came; strip cleans it; block replaces it with SWB_HIDDEN_TEXT_BLOCKED', async () => {
    assert.ok((await searched('/off')).message.includes(F.samples.tag));
    const stripped = await searched('/strip');
    assert.equal(stripped.code, -32000);
    assert.ok(stripped.message.includes(F.samples.none) && !/[\u{E0000}-\u{E007F}]/u.test(stripped.message), stripped.message);
    const blocked = await searched('/block');
    assert.equal((blocked.data as Json | undefined)?.code, 'SWB_HIDDEN_TEXT_BLOCKED', blocked.message);
  });
});
