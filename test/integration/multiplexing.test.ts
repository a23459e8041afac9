import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { everythingUpstream, FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { alive } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';


for (const sharing of ['shared', 'per-session'] as const) {
  describe(`multiplexing many sessions (${sharing})`, () => {
    let gw: RunningGateway;
    before(async () => {
      gw = await startGateway({
        upstreams: [everythingUpstream('everything', sharing, { pool: { size: 2, warm: 4, max: 40 } })],
        endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
      });
    });
    after(() => gw?.close());

    it('20 concurrent sessions × 20 calls with colliding ids: every answer reaches its own caller', async () => {
      // Every SDK client numbers its requests from 0: the ids collide across sessions by construction.
      const clients = await Promise.all(Array.from({ length: 20 }, (_, i) => connectClient(gw, i % 2 ? 'sse' : 'streamable-http', { name: `c${i}` })));
      let crossed = 0;
      let answered = 0;
      await Promise.all(
        clients.map((c, ci) =>
          Promise.all(
            Array.from({ length: 20 }, async (_, k) => {
              const text = textOf(await c.callTool({ name: 'echo', arguments: { message: `${ci}:${k}` } }));
              answered++;
              if (text !== `Echo: ${ci}:${k}`) crossed++;
            }),
          ),
        ),
      );
      await Promise.all(clients.map((c) => c.close()));
      assert.equal(answered, 400);
      assert.equal(crossed, 0);
    });

    it('a killed upstream fails the call in flight with an error naming it, then comes back', async () => {
      const client = await connectClient(gw, 'streamable-http');
      let listChanged = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        listChanged++;
      });
      // The first progress notification proves the call is in flight upstream.
      let inFlight!: () => void;
      const started = new Promise<void>((r) => (inFlight = r));
      const call = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } }, undefined, { onprogress: () => inFlight() });
      await started;
      const pool = gw.app.gateway.pools.get('everything')!;
      const busy = [...pool.instances].find((i) => i.inflight > 0)!;
      assert.ok(busy?.pid, 'the instance serving the call has a pid');
      process.kill(busy.pid!, 'SIGKILL');
      await assert.rejects(call, (err: unknown) => {
        assert.ok(err instanceof McpError);
        assert.match(err.message, /upstream "everything"/);
        return true;
      });
      // Restarted with backoff; the session carries on.
      let text = '';
      for (let i = 0; i < 50 && text === ''; i++) {
        try {
          text = textOf(await client.callTool({ name: 'echo', arguments: { message: 'back' } }));
        } catch {
          await sleep(100);
        }
      }
      assert.equal(text, 'Echo: back');
      assert.ok(busy.restarts >= 1);
      // The restarted upstream may offer a different catalogue: the client was told to re-list.
      await waitFor(() => listChanged > 0);
      assert.ok(listChanged >= 1, 'tools/list_changed received after the restart');
      await client.close();
    });

    if (sharing === 'per-session') {
      it('DELETE ends the session and stops its dedicated process', async () => {
        const pool = gw.app.gateway.pools.get('everything')!;
        const client = await connectClient(gw, 'streamable-http');
        const before = new Set([...pool.instances].filter((i) => i.dedicatedTo).map((i) => i.pid!));
        const transport = client.transport as unknown as { terminateSession(): Promise<void>; sessionId?: string };
        const sid = transport.sessionId!;
        const session = gw.app.gateway.registry.get(sid)!;
        const pid = [...pool.instances].find((i) => i.dedicatedTo === session)!.pid!;
        assert.ok(before.has(pid));
        await transport.terminateSession();
        await client.close();
        await waitFor(() => !alive(pid), { timeoutMs: 2500 });
        assert.equal(alive(pid), false, 'dedicated process stopped');
        assert.equal(gw.app.gateway.registry.get(sid), undefined);
      });

      it('a legacy SSE session ends when its stream closes, and its process with it', async () => {
        const pool = gw.app.gateway.pools.get('everything')!;
        const client = await connectClient(gw, 'sse');
        const pids = new Set([...pool.instances].filter((i) => i.dedicatedTo).map((i) => i.pid!));
        await client.close();
        const dedicated = () => new Set([...pool.instances].filter((i) => i.dedicatedTo).map((i) => i.pid!));
        await waitFor(() => [...pids].some((p) => !dedicated().has(p)));
        const after = dedicated();
        const gone = [...pids].filter((p) => !after.has(p));
        assert.equal(gone.length, 1);
        await waitFor(() => !alive(gone[0]!), { timeoutMs: 2500 });
        assert.equal(alive(gone[0]!), false);
      });
    }
  });
}

describe('per-session pool limits', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [everythingUpstream('everything', 'per-session', { pool: { size: 1, warm: 0, max: 1, queue: 0 } })],
      endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
    });
  });
  after(() => gw?.close());

  it('beyond max and queue, initialize fails with a clear error; a freed slot serves the next session', async () => {
    const first = await connectClient(gw, 'streamable-http');
    await assert.rejects(connectClient(gw, 'streamable-http'), /limit of 1 per-session instances/);
    await (first.transport as unknown as { terminateSession(): Promise<void> }).terminateSession();
    await first.close();
    const next = await connectClient(gw, 'streamable-http');
    assert.equal(textOf(await next.callTool({ name: 'echo', arguments: { message: 'x' } })), 'Echo: x');
    await next.close();
  });
});

describe('aggregation: one endpoint over two upstreams', () => {
  let gw: RunningGateway;
  let client: Client;
  before(async () => {
    gw = await startGateway({
      upstreams: [everythingUpstream('everything', 'shared'), { name: 'fixture', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['everything', 'fixture'] }],
    });
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  it('prefixes tool and prompt names with their upstream', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert.ok(names.includes('everything__echo'));
    assert.ok(names.includes('fixture__test_simple_text'));
    assert.ok(names.every((n) => /^(everything|fixture)__/.test(n)));
    assert.ok(names.every((n) => /^[A-Za-z0-9_.-]{1,128}$/.test(n)));
    const { prompts } = await client.listPrompts();
    assert.ok(prompts.some((p) => p.name === 'everything__simple-prompt'));
    assert.ok(prompts.some((p) => p.name === 'fixture__test_simple_prompt'));
  });

  it('passes tool definitions through untouched but for the name (deep-equal to a direct connection)', async () => {
    const direct = new Client({ name: 'direct', version: '1' });
    await direct.connect(new StdioClientTransport({ command: FIXTURE.command, args: FIXTURE.args, stderr: 'ignore' }));
    const want = (await direct.listTools()).tools;
    await direct.close();
    const got = (await client.listTools()).tools.filter((t) => t.name.startsWith('fixture__'));
    assert.deepEqual(
      got.map((t) => ({ ...t, name: t.name.slice('fixture__'.length) })),
      want,
    );
    const schema = got.find((t) => t.name === 'fixture__json_schema_2020_12_tool')!.inputSchema as Record<string, unknown>;
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.ok(schema.$defs);
  });

  it('routes calls, prompts and resource reads to the right upstream', async () => {
    assert.equal(textOf(await client.callTool({ name: 'everything__echo', arguments: { message: 'a' } })), 'Echo: a');
    assert.match(textOf(await client.callTool({ name: 'fixture__test_simple_text', arguments: {} })), /simple text/i);
    const got = await client.getPrompt({ name: 'fixture__test_simple_prompt' });
    assert.ok(got.messages.length > 0);
    const fromFixture = await client.readResource({ uri: 'test://static-text' });
    assert.equal(fromFixture.contents[0]?.uri, 'test://static-text');
    const { resources } = await client.listResources();
    const demo = resources.find((r) => r.uri.startsWith('demo://'))!;
    const fromEverything = await client.readResource({ uri: demo.uri });
    assert.equal(fromEverything.contents[0]?.uri, demo.uri);
    // A template URI that no list named: found by asking the upstreams in turn.
    const templ = await client.readResource({ uri: 'test://template/42/data' });
    assert.equal(templ.contents[0]?.uri, 'test://template/42/data');
  });

  it('answers an unknown prefixed tool as unknown', async () => {
    await assert.rejects(client.callTool({ name: 'nosuch__echo', arguments: {} }), (err: unknown) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32602);
      return true;
    });
  });
});

describe('shutdown answers every request in flight', () => {
  it('a call in flight gets an error when the gateway stops, never hangs', async () => {
    const gw = await startGateway({ upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
    const client = await connectClient(gw, 'streamable-http');
    // The first progress notification proves the call is in flight upstream.
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    const outcome = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 10 } }, undefined, { onprogress: () => inFlight() }).then(
      () => new Error('resolved'),
      (err: Error) => err,
    );
    await started;
    await gw.close();
    const err = await outcome;
    assert.ok(err instanceof McpError, String(err));
    assert.match(err.message, /the session ended \(the gateway is shutting down\)/);
    await client.close().catch(() => {});
  });
});

describe('catalogue check at start', () => {
  it('reports duplicate tool names and names with characters the MCP rule forbids (a name merely too long is shortened, not reported)', async () => {
    const lines: string[] = [];
    const unruly = (name: string, args: string[]) => ({ name, transport: 'stdio' as const, sandbox: 'none' as const, command: process.execPath, args: ['test/fixtures/unruly-server.mjs', ...args] });
    const gw = await startGateway(
      { upstreams: [unruly('one', ['--bad-catalogue']), unruly('two', [])], endpoints: [{ path: '/mcp', upstreams: ['one', 'two'] }] },
      { logLines: lines },
    );
    await gw.close();
    const conflicts = lines.map((l) => JSON.parse(l) as { msg: string }).filter((l) => l.msg.startsWith('name conflict'));
    const msgs = conflicts.map((c) => c.msg);
    assert.ok(msgs.includes('name conflict: tool "one__dup" is offered by upstream "one" twice'), msgs.join('\n'));
    assert.ok(msgs.includes('name conflict: tool "one__has space" breaks the MCP name rule (only [A-Za-z0-9_.-]) and is left out'), msgs.join('\n'));
    assert.ok(!msgs.some((m) => m.includes('x'.repeat(126))), 'a long name is shortened, not a conflict');
    assert.ok(!msgs.some((m) => m.includes('two__')));
  });
});
