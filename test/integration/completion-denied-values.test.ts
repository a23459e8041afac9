// completion/complete on an allowed resource template answers with the upstream's values for a variable:
// each value is a URI the template gives. A value whose URI the tenant's resource rules deny named a
// resource the tenant is told does not exist (resources/list hides it, a read answers "not found"):
// completing users://{userId}/profile listed "admin" past a deny of users://admin/*. Found by a review,
// 2026-12-07. A real stdio upstream (test/fixtures/completing-server.mjs), the official SDK client.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const FIXTURE = resolve('test/fixtures/completing-server.mjs');
const UPSTREAM = { name: 'done', transport: 'stdio' as const, command: process.execPath, args: [FIXTURE], sandbox: 'none' as const, sharing: 'shared' as const };

describe('completion values that name a denied resource', () => {
  let gw: RunningGateway;
  let client: Client;

  before(async () => {
    gw = await startGateway({
      upstreams: [UPSTREAM],
      endpoints: [{ path: '/mcp', upstreams: ['done'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['*'], deny: ['users://admin/*', 'repos://acme/secret'] } }],
    });
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  it('leaves out a value whose URI the tenant may not read, and counts only what it shows', async () => {
    await assert.rejects(client.readResource({ uri: 'users://admin/profile' }), /Resource users:\/\/admin\/profile not found/);
    const { completion } = await client.complete({ ref: { type: 'ref/resource', uri: 'users://{userId}/profile' }, argument: { name: 'userId', value: '' } });
    assert.deepEqual(completion.values, ['alice', 'bob']);
    assert.equal(completion.total, 2);
    const typed = await client.complete({ ref: { type: 'ref/resource', uri: 'users://{userId}/profile' }, argument: { name: 'userId', value: 'ad' } });
    assert.deepEqual(typed.completion.values, [], 'the denied value, typed, is not completed either');
  });

  it('judges a value by the URI it makes with the other variables the context gives', async () => {
    const complete = (owner: string) => client.complete({ ref: { type: 'ref/resource', uri: 'repos://{owner}/{repo}' }, argument: { name: 'repo', value: 's' }, context: { arguments: { owner } } });
    assert.deepEqual((await complete('acme')).completion.values, ['site']);
    assert.deepEqual((await complete('other')).completion.values, ['secret', 'site'], 'another owner\'s "secret" is no denied resource');
  });
});
