import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { startGateway, type RunningGateway } from './gateway.js';
import { connectClient, textOf, type ClientTransportKind } from './sdk.js';
import { waitFor } from './wait.js';

type UpstreamInput = ConfigInput['upstreams'][number];

/**
 * The official SDK client, through the gateway, to the official reference server: the whole feature
 * set, for one upstream configuration and one client transport. Used for stdio and remote upstreams.
 */
export function everythingSuite(title: string, upstream: () => Promise<UpstreamInput> | UpstreamInput, kind: ClientTransportKind, cleanup?: () => Promise<void>): void {
  describe(title, () => {
    let gw: RunningGateway;
    let client: Client;

    before(async () => {
      gw = await startGateway({ upstreams: [await upstream()], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
      client = await connectClient(gw, kind);
    });
    after(async () => {
      await client?.close();
      await gw?.close();
      await cleanup?.();
    });
    it('negotiates and reports the gateway as the server', () => {
      assert.equal(client.getServerVersion()?.name, 'switchboard');
      const caps = client.getServerCapabilities();
      assert.ok(caps?.tools && caps.prompts && caps.resources?.subscribe && caps.logging);
    });

    it('lists tools with their schemas and annotations intact', async () => {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const n of ['echo', 'get-sum', 'trigger-long-running-operation', 'trigger-sampling-request', 'trigger-elicitation-request']) {
        assert.ok(names.includes(n), `${n} listed`);
      }
      const echo = tools.find((t) => t.name === 'echo')!;
      assert.equal(echo.inputSchema.type, 'object');
      assert.deepEqual(Object.keys(echo.inputSchema.properties ?? {}), ['message']);
      assert.equal(echo.annotations?.readOnlyHint, true);
    });

    it('calls echo and get-sum', async () => {
      assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { message: 'hello' } })), 'Echo: hello');
      assert.equal(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })), 'The sum of 2 and 3 is 5.');
    });

    it('relays progress of a long-running call to the caller, before the result', async () => {
      const progress: number[] = [];
      // Steps 400 ms apart: on a loaded machine steps 100 ms apart once reached the gateway in one read,
      // left it as one chunk with the result, and the SDK's SSE client dropped them all (CI, Node 22).
      const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1.2, steps: 3 } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      });
      assert.match(textOf(result), /Long running operation completed/);
      if (kind === 'streamable-http') {
        assert.deepEqual(progress, [1, 2, 3]);
      } else {
        // The SDK's SSE client dispatches notifications a microtask after responses: when the last
        // progress and the result arrive in one chunk, it drops that progress itself (directly too).
        assert.deepEqual(progress, [1, 2, 3].slice(0, progress.length));
        assert.ok(progress.length >= 2, `got ${progress.length} progress notifications`);
      }
    });

    it('lists and reads resources, and reads from a template', async () => {
      const { resources } = await client.listResources();
      assert.ok(resources.length > 0);
      const first = resources[0]!;
      const read = await client.readResource({ uri: first.uri });
      assert.equal(read.contents[0]?.uri, first.uri);
      const templ = await client.readResource({ uri: 'demo://resource/dynamic/text/7' });
      assert.equal(templ.contents[0]?.uri, 'demo://resource/dynamic/text/7');
    });

    it('subscribes to a resource and receives its updates', async () => {
      const { resources } = await client.listResources();
      const uri = resources[0]!.uri;
      const updates: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updates.push(n.params.uri);
      });
      await client.subscribeResource({ uri });
      await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
      await waitFor(() => updates.length > 0);
      await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
      await client.unsubscribeResource({ uri });
      assert.ok(updates.includes(uri), `update for ${uri} received`);
    });

    it('lists and gets prompts', async () => {
      const { prompts } = await client.listPrompts();
      assert.ok(prompts.some((p) => p.name === 'simple-prompt'));
      const got = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'Texas' } });
      assert.match(JSON.stringify(got.messages), /Paris/);
    });

    it('routes a sampling request to this client and its answer back', async () => {
      const result = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi there', maxTokens: 10 } });
      assert.match(textOf(result), /sampled: .*hi there/);
      assert.match(textOf(result), /test-model/);
    });

    it('routes an elicitation request to this client and its answer back', async () => {
      const result = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      assert.match(textOf(result), /Ada/);
    });

    it('completes prompt arguments', async () => {
      const r = await client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } });
      assert.ok(Array.isArray(r.completion.values));
    });

    it('sets the logging level on the upstream', async () => {
      assert.deepEqual(await client.setLoggingLevel('debug'), {});
    });

    it('cancels a call: the client gets its abort, the upstream request is released, the session goes on', async () => {
      const ac = new AbortController();
      // The first progress notification proves the call is in flight upstream.
      let inFlight!: () => void;
      const started = new Promise<void>((r) => (inFlight = r));
      const call = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } }, undefined, { signal: ac.signal, onprogress: () => inFlight() });
      await started;
      const inflight = () => [...gw.app.gateway.pools.get('everything')!.instances].reduce((n, i) => n + i.inflight, 0);
      ac.abort('test cancels');
      await assert.rejects(call);
      await waitFor(() => inflight() === 0, { timeoutMs: 1000 });
      assert.equal(inflight(), 0);
      assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { message: 'after' } })), 'Echo: after');
    });
  });
}
