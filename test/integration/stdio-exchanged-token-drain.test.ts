// A stdio upstream started with an exchange of its session's user's token (tokenEnv, token-exchange,
// sharing: per-session) is replaced by one started with the new token once the exchange gives another
// (renewed before it expires, or exchanged from a narrower token its client sent): see
// stdio-exchanged-token-renewal.test.ts. The old process was stopped at once, and every call still running
// on it failed as in a crash. Now it finishes the calls sent to it, what they need still passing through it
// (their progress, its question to the client and the answer), while every new request goes to the new
// process; it is stopped once its last call ends.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { decodeJwt } from 'jose';
import { startStdioExchangeRig } from '../helpers/exchange-rig.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { connectWithToken, signToken, type TestKey, type TokenClient } from '../helpers/tokens.js';

const SERVER = resolve('test/fixtures/token-holding-server.mjs');
const BROAD = 'tickets:read tickets:write';
const NARROW = 'tickets:read';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a stdio upstream replaced for a new exchanged token while a call runs on it', () => {
  let key: TestKey;
  let gw: RunningGateway;
  let close: (() => Promise<void>) | undefined;
  const clients: TokenClient[] = [];

  before(async () => {
    ({ key, gw, close } = await startStdioExchangeRig(SERVER, 600));
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await close?.();
  });

  const call = async <T>(c: TokenClient, name: string): Promise<T> =>
    JSON.parse((await c.client.callTool({ name, arguments: {} }) as { content: Array<{ text: string }> }).content[0]!.text) as T;

  it('the call in flight ends on the old process, with its progress and its question answered there; new calls go to the new one', async () => {
    const c = await connectWithToken(gw, 'streamable-http', await signToken(key, { sub: 'alice', scope: BROAD, expIn: 600 }), { path: '/tickets', capabilities: { elicitation: {} } });
    clients.push(c);
    let asked!: () => void;
    const wasAsked = new Promise<void>((r) => (asked = r));
    let answer!: (name: string) => void;
    const answered = new Promise<string>((r) => (answer = r));
    c.client.setRequestHandler(ElicitRequestSchema, async () => (asked(), { action: 'accept', content: { name: await answered } }));

    const first = await call<{ pid: number; token: string }>(c, 'whoami');
    assert.equal(decodeJwt(first.token).subject_scope, BROAD);
    const progress: number[] = [];
    const slow = c.client.callTool({ name: 'ask', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) });
    await wasAsked; // the call runs on the first process, which waits for its client's answer

    c.setToken(await signToken(key, { sub: 'alice', scope: NARROW, expIn: 600 }));
    const second = await call<{ pid: number; token: string }>(c, 'whoami');
    assert.notEqual(second.pid, first.pid, 'a new process, started with the new token');
    assert.equal(decodeJwt(second.token).subject_scope, NARROW);
    assert.ok(alive(first.pid), 'the old process runs on while its call does');

    answer('Alice');
    const result = JSON.parse((await slow as { content: Array<{ text: string }> }).content[0]!.text) as { pid: number; token: string; name: string };
    assert.deepEqual(result, { pid: first.pid, token: first.token, name: 'Alice' }, 'the call ended on the process it was sent to, with the answer to its question');
    assert.deepEqual(progress, [50], "its progress reached the caller");

    const heard = await call<string[]>(c, 'heard');
    assert.ok(!heard.some((m) => m.startsWith('answer:')), `an answer meant for the old process reached the new one: ${heard.join(', ')}`);
    assert.deepEqual(heard.filter((m) => m === 'tools/call').length, 2, 'the new process got the calls sent after the switch (whoami, heard), and only those');
    while (alive(first.pid)) await new Promise((r) => setTimeout(r, 50)); // stopped once its last call ended
    assert.equal((await call<{ pid: number }>(c, 'whoami')).pid, second.pid);
  });

  it("a call in flight cancelled after the switch: its cancellation goes to the old process, which then stops", async () => {
    const c = await connectWithToken(gw, 'streamable-http', await signToken(key, { sub: 'alice', scope: BROAD, expIn: 600 }), { path: '/tickets', capabilities: { elicitation: {} } });
    clients.push(c);
    let asked!: () => void;
    const wasAsked = new Promise<void>((r) => (asked = r));
    c.client.setRequestHandler(ElicitRequestSchema, (_req, extra) => (asked(), new Promise((_, reject) => extra.signal.addEventListener('abort', () => reject(new Error('cancelled'))))));
    const first = await call<{ pid: number }>(c, 'whoami');
    const cancel = new AbortController();
    const slow = c.client.callTool({ name: 'ask', arguments: {} }, undefined, { signal: cancel.signal });
    await wasAsked;
    c.setToken(await signToken(key, { sub: 'alice', scope: NARROW, expIn: 600 }));
    const second = await call<{ pid: number }>(c, 'whoami');
    assert.notEqual(second.pid, first.pid);
    cancel.abort();
    await assert.rejects(slow);
    while (alive(first.pid)) await new Promise((r) => setTimeout(r, 50)); // its one call over: stopped
    const heard = await call<string[]>(c, 'heard');
    assert.ok(!heard.includes('notifications/cancelled'), `the cancellation of the old process's call reached the new one: ${heard.join(', ')}`);
  });
});
