// A question a stdio upstream asks while two 2026-07-28 calls of one client are in flight there: nothing on
// stdio says which call it is for, and each call is answered on its own POST, so the question must not be
// put in the round of whichever call happened to be sent last. Real gateway, the crossing fixture (stdio,
// per-session: the process knows its client, not the call), raw modern POSTs.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

const text = (a: { body: any }) => String(a.body?.result?.content?.[0]?.text ?? JSON.stringify(a.body));

describe('2026-07-28: an upstream question no call can be told for', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, args: ['test/fixtures/crossing-server.mjs'], sandbox: 'none', sharing: 'per-session' }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    });
  });
  after(() => gw.close());

  it('is not put in the round of another call in flight, which goes on', async () => {
    // The call the question is for declares elicitation; the other declares nothing it could be asked.
    const first = modernPost(gw.url(), 'tools/call', { name: 'ask_later', arguments: {} }, { caps: { elicitation: { form: {} } } });
    await until('ask_later reached the upstream', async () => text(await modernPost(gw.url(), 'tools/call', { name: 'heard', arguments: {} }, { caps: {} })).includes('ask_later'));
    const second = await modernPost(gw.url(), 'tools/call', { name: 'second', arguments: {} }, { caps: {} });
    assert.equal(second.status, 200, `the second call was not refused for the other call's question: ${JSON.stringify(second.body)}`);
    assert.equal(text(second), 'second done');
    const asked = await first;
    assert.equal(asked.status, 200);
    assert.match(text(asked), /cannot tell which/, 'the upstream is told the gateway cannot tell whose question it is');
  });
});

describe('2026-07-28: a question from an upstream none of the standing\'s calls is running on', () => {
  let gw: RunningGateway;
  // a's messages are read from the file it writes, not by calling it: a call in flight on a when it asks
  // its question would be the one running there, and be put the question (seen on a loaded machine).
  const aHeard = join(mkdtempSync(join(tmpdir(), 'crossing-')), 'a.json');
  const crossing = (name: string, env: Record<string, string> = {}) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/crossing-server.mjs'], sandbox: 'none' as const, sharing: 'per-session' as const, env });
  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [crossing('a', { HEARD_FILE: aHeard }), crossing('b')], endpoints: [{ path: '/mcp', upstreams: ['a', 'b'] }] });
  });
  after(() => gw.close());

  it('is not put to the one call running on another upstream, which goes on', async () => {
    type Heard = Array<Record<string, unknown>>;
    const heard = async (upstream: string): Promise<Heard> => {
      if (upstream === 'a') return existsSync(aHeard) ? (JSON.parse(readFileSync(aHeard, 'utf8')) as Heard) : [];
      return JSON.parse(text(await modernPost(gw.url(), 'tools/call', { name: `${upstream}__heard`, arguments: {} }, { caps: {} }))) as Heard;
    };
    const running = new AbortController();
    const other = modernPost(gw.url(), 'tools/call', { name: 'b__wait', arguments: {} }, { caps: {}, signal: running.signal }).catch(() => undefined);
    await until('b__wait reached b', async () => (await heard('b')).some((h) => h.name === 'wait'));
    // A call on a that the client gives up: a asks sampling for it after reading the cancel (nothing says for which call).
    const stop = new AbortController();
    const mail = modernPost(gw.url(), 'tools/call', { name: 'a__summarize_my_mail', arguments: {} }, { caps: {}, signal: stop.signal }).catch(() => undefined);
    await until('a__summarize_my_mail reached a', async () => (await heard('a')).some((h) => h.name === 'summarize_my_mail'));
    stop.abort();
    await mail;
    let answer: Record<string, unknown> | undefined;
    await until('a had its question answered', async () => (answer = (await heard('a')).find((h) => h.answer === 'sample-1')) !== undefined);
    assert.match(String(answer!.error), /cannot tell which 2026-07-28 request/, `not put to b__wait's call: ${JSON.stringify(answer)}`);
    assert.ok(!(await heard('b')).some((h) => h.method === 'notifications/cancelled'), 'b__wait was not cancelled');
    running.abort();
    await other;
  });
});
