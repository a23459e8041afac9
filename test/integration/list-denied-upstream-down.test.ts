// An endpoint under failureMode closed (exposure all, the default) failed its aggregated lists when any of its
// upstreams could not list, also one the caller may be shown nothing of (every tool or prompt of it denied
// by the tenant's policy, every resource denied, or every tool left out by curation): the caller was told, by
// name, of an upstream it may not see ("upstream \"hr\" …") and lost its listing to an upstream it cannot
// use. Such an upstream's failure is now no part of the list; a visible one's still fails it, as failureMode
// closed asks. In both protocol eras. Search mode's answers: tool-search-denied-upstream-down.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, type RunningGateway } from '../helpers/gateway.js';
import { gatewayWithClients } from '../helpers/gateway-clients.js';
import { modernPost } from '../helpers/modern-http.js';

const fs = { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', '--set', 'files'], sandbox: 'none' as const };
/** Tools, prompts, resources and templates. */
const ev = { name: 'ev', transport: 'stdio' as const, ...FIXTURE };
/** Nothing listens on port 9 (discard): these upstreams stay unreachable, their capabilities unknown (so asked for every list). */
const downAt = (name: string) => ({ name, transport: 'streamable-http' as const, url: 'http://127.0.0.1:9/mcp', sharing: 'shared' as const, era: 'legacy' as const, healthCheck: { intervalMs: 0 } });

/** What a request got: "ok", or its error's code and message. */
function outcome(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (e: { code?: number; message: string }) => `${e.code} ${e.message}`,
  );
}

/** The same of a modern (2026-07-28) request. */
async function modernOutcome(gw: RunningGateway, path: string, method: string): Promise<string> {
  const { body } = await modernPost(gw.url(path), method, {});
  return body.error ? `${body.error.code} ${body.error.message}` : 'ok';
}

describe('an endpoint (failureMode closed, exposure all) with a down upstream the caller may see nothing of', { timeout: 60_000 }, () => {
  const rig = gatewayWithClients({
    upstreams: [fs, ev, downAt('hr'), downAt('ops')],
    endpoints: [
      { path: '/denied-down', upstreams: ['fs', 'ev', 'hr'], failureMode: 'closed' },
      { path: '/both-down', upstreams: ['fs', 'hr', 'ops'], failureMode: 'closed' },
      // Curation that leaves out every tool of the down upstream: what the caller is shown holds none of it either.
      { path: '/curated-out', upstreams: ['fs', 'ops'], failureMode: 'closed', tools: { exclude: ['ops__*'] } },
    ],
    tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { allow: ['fs__*', 'ev__*', 'ops__*'] }, prompts: { allow: ['ev__*', 'ops__*'] }, resources: { allow: [] } }],
  });
  /** The client on that endpoint (one each, connected before the tests). */
  const connect = async (path: string) => rig.clients[path]!;

  it('lists what the caller may see, and never names the denied upstream', async () => {
    const c = await connect('/denied-down');
    assert.equal(await outcome(c.listTools()), 'ok');
    const { tools } = await c.listTools();
    assert.ok(tools.some((t) => t.name === 'fs__read_file'));
    assert.ok(tools.some((t) => t.name.startsWith('ev__')));
    assert.equal(await outcome(c.listPrompts()), 'ok');
    const { prompts } = await c.listPrompts();
    assert.ok(prompts.length > 0 && prompts.every((p) => p.name.startsWith('ev__')));
    // No resource at all is allowed: the down upstream's resources are none of the caller's either.
    assert.equal(await outcome(c.listResources()), 'ok');
    assert.equal(await outcome(c.listResourceTemplates()), 'ok');
  });

  it('the same in the modern era', async () => {
    for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']) {
      assert.equal(await modernOutcome(rig.gw, '/denied-down', method), 'ok', method);
    }
  });

  it('the same where curation leaves out every tool of the down upstream', async () => {
    const c = await connect('/curated-out');
    assert.equal(await outcome(c.listTools()), 'ok');
    const { tools } = await c.listTools();
    assert.ok(tools.some((t) => t.name === 'fs__read_file'));
    assert.doesNotMatch(JSON.stringify(tools), /ops/);
    assert.equal(await modernOutcome(rig.gw, '/curated-out', 'tools/list'), 'ok');
  });

  it('still fails when an upstream the caller may see is down, naming that one', async () => {
    const c = await connect('/both-down');
    assert.match(await outcome(c.listTools()), /^-32000 .*upstream "ops"/);
    assert.match(await outcome(c.listPrompts()), /^-32000 .*upstream "ops"/);
    assert.match(await modernOutcome(rig.gw, '/both-down', 'tools/list'), /^-32000 .*upstream "ops"/);
    assert.match(await modernOutcome(rig.gw, '/both-down', 'prompts/list'), /^-32000 .*upstream "ops"/);
  });
});
