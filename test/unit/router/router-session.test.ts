import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { ErrorCode } from '../../../src/jsonrpc/error-codes.js';
import { JsonRpcError } from '../../../src/jsonrpc/json-rpc-error.js';
import type { JsonRpcMessage, JsonRpcRequest, RequestId } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { encodeCursor } from '../../../src/router/cursor.js';
import { EndpointRouter, MAX_MATCHED_URI_CHARS } from '../../../src/router/endpoint-router.js';
import type { RouteContext, RouterSession } from '../../../src/router/router-session.js';
import type { ToolGate } from '../../../src/router/tool-gate.js';
import { MemoryTransport } from '../../../src/transport/memory-pair.js';
import type { UpstreamCaller } from '../../../src/upstream/upstream-caller.js';
import type { TransportFactory } from '../../../src/upstream/upstream-instance.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { GatewayError } from '../../../src/errors.js';
import { MAX_SUBSCRIPTIONS_PER_SESSION } from '../../../src/router/session-subscriptions.js';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import { HiddenTextGuard } from '../../../src/policy/hidden-text-guard.js';
import { TenantPolicy, ALLOW_ALL } from '../../../src/policy/tenant-policy.js';

const logger = createLogger('silent');
const settle = () => new Promise<void>((r) => setImmediate(r));

interface Item {
  name?: string;
  uri?: string;
  [k: string]: unknown;
}

interface ServerSpec {
  name: string;
  capabilities: Record<string, unknown>;
  tools?: Item[];
  resources?: Item[];
  resourceTemplates?: Item[];
  prompts?: Item[];
  instructions?: string;
  pageSize?: number;
  /** Characters of padding after each cursor it hands out (a server whose cursors are large). */
  cursorPad?: number;
  /** Methods this server answers with an internal error. */
  failing?: string[];
  sharing?: 'shared' | 'per-tenant' | 'per-session';
  /** pool.size: processes a shared upstream's requests are spread over. */
  poolSize?: number;
  /** Its cursors are its process's own (a server keeping its pages in memory): another process refuses them. */
  processCursors?: boolean;
}

/** A small MCP server on the far end of a memory pair; records every request it receives. */
class FakeServer {
  readonly log: JsonRpcRequest[] = [];
  transport: MemoryTransport | undefined;
  /** Methods whose answers wait for release(); the answers held so far. */
  readonly held = new Set<string>();
  #waiting: Array<() => void> = [];
  /** Processes (connections) attached so far, and the one whose request is being answered. */
  #attached = 0;
  #process = 0;

  constructor(readonly spec: ServerSpec) {}

  attach(t: MemoryTransport): void {
    this.transport = t;
    const process = ++this.#attached;
    t.onmessage = (m) => {
      if (!('method' in m) || !('id' in m)) return;
      const req = m as JsonRpcRequest;
      this.log.push(req);
      this.#process = process;
      const answer = this.#answer(req);
      // An answer after the gateway closed the link (an unsubscribe sent as a session ends) goes nowhere.
      const send = () => void t.send('error' in answer ? { jsonrpc: '2.0', id: req.id, error: answer.error } : { jsonrpc: '2.0', id: req.id, result: answer.result }).catch(() => {});
      if (this.held.has(req.method)) this.#waiting.push(send);
      else send();
    };
  }

  /** Answers every held request now, and the ones that come later at once. */
  release(): void {
    this.held.clear();
    for (const send of this.#waiting.splice(0)) send();
  }

  notify(method: string, params?: Record<string, unknown>): void {
    void this.transport!.send(params ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', method });
  }

  requests(method: string): JsonRpcRequest[] {
    return this.log.filter((r) => r.method === method);
  }

  #page(key: string, items: Item[] | undefined, cursor: unknown): { result: Record<string, unknown> } | { error: { code: number; message: string } } {
    const all = items ?? [];
    const size = this.spec.pageSize ?? 2;
    const own = this.spec.processCursors ? `@${this.#process}` : '';
    let offset = 0;
    if (cursor !== undefined) {
      const m = typeof cursor === 'string' ? /^off:(\d+)(@\d+)?(?::x*)?$/.exec(cursor) : null;
      offset = m && (m[2] ?? '') === own ? Number(m[1]) : -1;
      if (offset < 0 || offset >= all.length) return { error: { code: -32602, message: `bad cursor ${String(cursor)}` } };
    }
    const result: Record<string, unknown> = { [key]: all.slice(offset, offset + size) };
    if (offset + size < all.length) result.nextCursor = `off:${offset + size}${own}${this.spec.cursorPad ? `:${'x'.repeat(this.spec.cursorPad)}` : ''}`;
    return { result };
  }

  #answer(req: JsonRpcRequest): { result: Record<string, unknown> } | { error: { code: number; message: string } } {
    const s = this.spec;
    const p = req.params ?? {};
    if (s.failing?.includes(req.method)) return { error: { code: -32603, message: `${s.name} is broken` } };
    switch (req.method) {
      case 'initialize':
        return {
          result: {
            protocolVersion: '2025-11-25',
            capabilities: s.capabilities,
            serverInfo: { name: `fake-${s.name}`, version: '1.0.0' },
            ...(s.instructions ? { instructions: s.instructions } : {}),
          },
        };
      case 'tools/list':
        return this.#page('tools', s.tools, p.cursor);
      case 'tools/call':
        if (!s.tools?.some((t) => t.name === p.name)) return { error: { code: -32602, message: `Unknown tool: ${String(p.name)}` } };
        return { result: { content: [{ type: 'text', text: `${s.name}:${String(p.name)}` }], args: p.arguments ?? null } };
      case 'resources/list':
        return this.#page('resources', s.resources, p.cursor);
      case 'resources/templates/list':
        return this.#page('resourceTemplates', s.resourceTemplates, p.cursor);
      case 'completion/complete':
        return { result: { completion: { values: [`${s.name}:${String((p.ref as Item | undefined)?.uri)}`], hasMore: false } } };
      case 'resources/read': {
        const r = s.resources?.find((x) => x.uri === p.uri);
        if (!r) return { error: { code: -32002, message: `Resource not found: ${String(p.uri)}` } };
        return { result: { contents: [{ uri: r.uri, text: `${s.name} read ${r.uri}` }] } };
      }
      case 'prompts/list':
        return this.#page('prompts', s.prompts, p.cursor);
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return { result: {} };
      case 'prompts/get':
        if (!s.prompts?.some((x) => x.name === p.name)) return { error: { code: -32602, message: `Unknown prompt: ${String(p.name)}` } };
        return { result: { description: `${s.name}:${String(p.name)}`, messages: [] } };
      default:
        return { error: { code: -32601, message: `Method not found: ${req.method}` } };
    }
  }
}

function fakeCaller(id = 'session-1', tenant = 't1') {
  const notes: Array<[string, Record<string, unknown> | undefined]> = [];
  const caller: UpstreamCaller = {
    id,
    tenant,
    clientRequest: async () => ({}),
    clientNotify: (method, params) => notes.push([method, params]),
  };
  return { caller, notes };
}

interface Built {
  session: RouterSession;
  router: EndpointRouter;
  /** The pools by name; a test may replace one (a reload's changed upstream) with `replace`. */
  pools: Map<string, UpstreamPool>;
  replace(spec: ServerSpec): Promise<UpstreamPool>;
  servers: Map<string, FakeServer>;
  server(name: string): FakeServer;
  notes: Array<[string, Record<string, unknown> | undefined]>;
  request(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

let nextRequestId = 1;

async function build(specs: ServerSpec[], prefix?: 'auto' | 'always' | 'never', gate?: ToolGate, endpoint: Record<string, unknown> = {}): Promise<Built> {
  const cfg = parseConfig(
    {
      upstreams: specs.map((s) => ({ name: s.name, transport: 'stdio', command: 'never-run', ...(s.sharing ? { sharing: s.sharing } : {}), ...(s.poolSize ? { pool: { size: s.poolSize } } : {}) })),
      endpoints: [{ path: '/mcp', upstreams: specs.map((s) => s.name), ...(prefix ? { prefix } : {}), ...endpoint }],
    },
    'test',
    {},
  );
  const servers = new Map(specs.map((s) => [s.name, new FakeServer(s)]));
  const factory: TransportFactory = (upstream) => {
    const [gw, up] = MemoryTransport.pair();
    servers.get(upstream.name)!.attach(up);
    return gw;
  };
  const pools = new Map<string, UpstreamPool>();
  for (const u of cfg.upstreams) pools.set(u.name, new UpstreamPool(u, logger, factory));
  await Promise.all([...pools.values()].map((p) => p.start()));
  const router = new EndpointRouter(cfg.endpoints[0]!, pools, logger, gate);
  const { caller, notes } = fakeCaller();
  const session = await router.open(caller);
  const retired: UpstreamPool[] = [];
  return {
    session,
    router,
    pools,
    replace: async (spec) => {
      servers.set(spec.name, new FakeServer(spec));
      const pool = new UpstreamPool(cfg.upstreams.find((u) => u.name === spec.name)!, logger, factory);
      await pool.start();
      retired.push(pools.get(spec.name)!);
      pools.set(spec.name, pool);
      return pool;
    },
    servers,
    server: (name) => servers.get(name)!,
    notes,
    request: (method, params) => {
      const ctx: RouteContext = { signal: new Cancellation(), requestId: nextRequestId++ };
      return session.request(method, params, ctx);
    },
    close: async () => {
      await session.close();
      await router.close();
      await Promise.all([...pools.values(), ...retired].map((p) => p.close()));
    },
  };
}

async function withGateway(specs: ServerSpec[], prefix: 'auto' | 'always' | 'never' | undefined, fn: (b: Built) => Promise<void>): Promise<void> {
  const b = await build(specs, prefix);
  try {
    await fn(b);
  } finally {
    await b.close();
  }
}

const tool = (name: string, extra: Record<string, unknown> = {}): Item => ({ name, description: `tool ${name}`, inputSchema: { type: 'object' }, ...extra });
const names = (r: Record<string, unknown>, key = 'tools') => (r[key] as Item[]).map((t) => (key === 'resources' ? t.uri : t.name));

function rpcError(code: number, message?: string | RegExp) {
  return (err: unknown) =>
    err instanceof JsonRpcError && err.code === code && (message === undefined || (typeof message === 'string' ? err.message === message : message.test(err.message)));
}

const A: ServerSpec = {
  name: 'a',
  capabilities: { tools: {}, resources: { subscribe: true } },
  tools: ['a1', 'a2', 'a3', 'a4', 'a5'].map((n) => tool(n)),
  resources: [
    { uri: 'file:///a/one.txt', name: 'one' },
    { uri: 'file:///a/two.txt', name: 'two' },
  ],
  instructions: 'Use a for files.',
};
const B: ServerSpec = {
  name: 'b',
  capabilities: { tools: { listChanged: true }, prompts: {}, resources: {}, logging: {} },
  tools: ['b1', 'b2', 'b3'].map((n) => tool(n)),
  resources: [{ uri: 'mem://b/note', name: 'note' }],
  prompts: [{ name: 'greet' }, { name: 'bye' }],
  instructions: 'Use b for memory.',
};

describe('RouterSession with two upstreams', () => {
  it('prefixes tool names with "<upstream>__" and fans tools/list out to both upstreams', async () => {
    await withGateway([A, B], undefined, async (g) => {
      assert.equal(g.router.prefixNames, true);
      const r = await g.request('tools/list');
      assert.deepEqual(names(r), ['a__a1', 'a__a2', 'b__b1', 'b__b2']);
      assert.equal(typeof r.nextCursor, 'string');
      assert.equal(g.server('a').requests('tools/list').length, 1);
      assert.equal(g.server('b').requests('tools/list').length, 1);
      // The first page asks upstreams without a cursor.
      assert.equal(g.server('a').requests('tools/list')[0]!.params, undefined);
    });
  });

  it('walks every page of every upstream with the composite cursor: no duplicates, nothing missing', async () => {
    await withGateway([A, B], undefined, async (g) => {
      const seen: string[] = [];
      const pages: string[][] = [];
      let cursor: unknown;
      for (let i = 0; i < 10; i++) {
        const r = await g.request('tools/list', cursor === undefined ? undefined : { cursor });
        pages.push(names(r) as string[]);
        seen.push(...(names(r) as string[]));
        cursor = r.nextCursor;
        if (cursor === undefined) break;
      }
      assert.equal(cursor, undefined, 'pagination ended');
      assert.deepEqual(pages, [['a__a1', 'a__a2', 'b__b1', 'b__b2'], ['a__a3', 'a__a4', 'b__b3'], ['a__a5']]);
      assert.equal(new Set(seen).size, seen.length, 'no duplicates');
      assert.deepEqual([...seen].sort(), ['a__a1', 'a__a2', 'a__a3', 'a__a4', 'a__a5', 'b__b1', 'b__b2', 'b__b3']);
      // Each upstream got back exactly its own cursors, and b was not asked again once it was done.
      assert.deepEqual(g.server('a').requests('tools/list').map((r) => r.params?.cursor), [undefined, 'off:2', 'off:4']);
      assert.deepEqual(g.server('b').requests('tools/list').map((r) => r.params?.cursor), [undefined, 'off:2']);
    });
  });

  it('a cursor over many upstreams with large cursors is always taken back: every page, every tool once', async () => {
    // 40 upstreams with 3 tools each, one a page, each cursor 3 KB: all cursors together are far longer
    // than the 64 KiB the gateway takes back. Each page holds what fits; the rest follows on later pages.
    const specs: ServerSpec[] = Array.from({ length: 40 }, (_, i) => ({ name: `u${i}`, capabilities: { tools: {} }, tools: ['t1', 't2', 't3'].map((n) => tool(n)), pageSize: 1, cursorPad: 3000 }));
    await withGateway(specs, undefined, async (g) => {
      const seen: string[] = [];
      let cursor: unknown;
      for (let page = 0; page < 400; page++) {
        const r = await g.request('tools/list', cursor === undefined ? undefined : { cursor });
        seen.push(...(names(r) as string[]));
        cursor = r.nextCursor;
        if (cursor === undefined) break;
        assert.ok(String(cursor).length <= 65_536, `page ${page}: a cursor of ${String(cursor).length} characters`);
      }
      assert.equal(cursor, undefined, 'pagination ended');
      assert.equal(new Set(seen).size, seen.length, 'no duplicates');
      assert.equal(seen.length, 120, 'every tool of every upstream');
    });
  });

  it('an upstream whose one cursor is longer than a cursor may be is left out of the rest of the list, like a failing one', async () => {
    const huge: ServerSpec = { name: 'huge', capabilities: { tools: {} }, tools: ['h1', 'h2'].map((n) => tool(n)), pageSize: 1, cursorPad: 70_000 };
    await withGateway([A, huge], undefined, async (g) => {
      const seen: string[] = [];
      let cursor: unknown;
      for (let page = 0; page < 10; page++) {
        const r = await g.request('tools/list', cursor === undefined ? undefined : { cursor });
        seen.push(...(names(r) as string[]));
        cursor = r.nextCursor;
        if (cursor === undefined) break;
      }
      assert.equal(cursor, undefined, 'pagination ended');
      assert.deepEqual(seen.sort(), ['a__a1', 'a__a2', 'a__a3', 'a__a4', 'a__a5']);
    });
  });

  it('refuses a malformed cursor, and a cursor from another list method, with -32602', async () => {
    await withGateway([A, B], undefined, async (g) => {
      await assert.rejects(g.request('tools/list', { cursor: 'garbage!' }), rpcError(ErrorCode.InvalidParams));
      await assert.rejects(g.request('tools/list', { cursor: 42 }), rpcError(-32602));
      // A well-formed cursor, but made for resources/list.
      const other = encodeCursor('resources/list', { a: 'off:2' });
      await assert.rejects(g.request('tools/list', { cursor: other }), rpcError(-32602, 'Invalid params: unknown or malformed cursor'));
      // A real tools/list cursor replayed on prompts/list.
      const first = await g.request('tools/list');
      await assert.rejects(g.request('prompts/list', { cursor: first.nextCursor }), rpcError(-32602));
      // A cursor naming an upstream that is not on this endpoint.
      await assert.rejects(g.request('tools/list', { cursor: encodeCursor('tools/list', { ghost: 'off:2' }) }), rpcError(-32602));
      assert.equal(g.server('a').requests('tools/list').length, 1, 'only the one good list reached the upstream');
      assert.equal(g.server('b').requests('prompts/list').length, 0);
    });
  });

  it('tools/call "a__x" reaches upstream a with the name "x" and the arguments untouched', async () => {
    await withGateway([A, B], undefined, async (g) => {
      const r = await g.request('tools/call', { name: 'a__a3', arguments: { q: 'hello', n: [1, 2] } });
      assert.deepEqual(r, { content: [{ type: 'text', text: 'a:a3' }], args: { q: 'hello', n: [1, 2] } });
      const calls = g.server('a').requests('tools/call');
      assert.equal(calls.length, 1);
      assert.deepEqual(calls[0]!.params, { name: 'a3', arguments: { q: 'hello', n: [1, 2] } });
      assert.equal(g.server('b').requests('tools/call').length, 0);
      const rb = await g.request('tools/call', { name: 'b__b1' });
      assert.deepEqual(rb.content, [{ type: 'text', text: 'b:b1' }]);
    });
  });

  it('answers an unknown prefix or an unprefixed name with -32602, reaching no upstream', async () => {
    await withGateway([A, B], undefined, async (g) => {
      await assert.rejects(g.request('tools/call', { name: 'zz__x' }), rpcError(-32602, 'Tool zz__x not found'));
      await assert.rejects(g.request('tools/call', { name: 'a1' }), rpcError(-32602, 'Tool a1 not found'));
      await assert.rejects(g.request('tools/call', { name: 42 }), rpcError(-32602));
      await assert.rejects(g.request('prompts/get', { name: 'nope__greet' }), rpcError(-32602, 'Prompt nope__greet not found'));
      assert.equal(g.server('a').requests('tools/call').length, 0);
      assert.equal(g.server('b').requests('tools/call').length, 0);
    });
  });

  it('answers a tool the upstream does not list itself, as "not found", without calling the upstream', async () => {
    await withGateway([A, B], undefined, async (g) => {
      await assert.rejects(g.request('tools/call', { name: 'a__missing' }), rpcError(-32602, 'Tool a__missing not found'));
      assert.equal(g.server('a').requests('tools/call').length, 0);
    });
  });

  it('passes an upstream\'s own error back unchanged', async () => {
    await withGateway([A, { ...B, failing: ['tools/call'] }], undefined, async (g) => {
      await assert.rejects(g.request('tools/call', { name: 'b__b1' }), rpcError(-32603, 'b is broken'));
    });
  });

  it('passes inputSchema ($schema, $defs, additionalProperties), outputSchema and annotations through unchanged', async () => {
    const inputSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { pos: { type: 'integer', minimum: 1 } },
      properties: { count: { $ref: '#/$defs/pos' }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['count'],
      additionalProperties: false,
    };
    const outputSchema = { type: 'object', properties: { ok: { type: 'boolean' } }, additionalProperties: true };
    const annotations = { readOnlyHint: true, title: 'Counter' };
    const spec: ServerSpec = { ...A, tools: [tool('count', { inputSchema, outputSchema, annotations, _meta: { 'x/y': 1 }, title: 'Count' })] };
    await withGateway([spec, B], undefined, async (g) => {
      const r = await g.request('tools/list');
      const t = (r.tools as Item[]).find((x) => x.name === 'a__count')!;
      assert.deepEqual(t, { name: 'a__count', description: 'tool count', inputSchema, outputSchema, annotations, _meta: { 'x/y': 1 }, title: 'Count' });
    });
  });

  it('routes resources/read by the URI learned from resources/list', async () => {
    await withGateway([A, B], undefined, async (g) => {
      const list = await g.request('resources/list');
      assert.deepEqual(names(list, 'resources'), ['file:///a/one.txt', 'file:///a/two.txt', 'mem://b/note']);
      const r = await g.request('resources/read', { uri: 'mem://b/note' });
      assert.deepEqual(r, { contents: [{ uri: 'mem://b/note', text: 'b read mem://b/note' }] });
      assert.equal(g.server('a').requests('resources/read').length, 0, 'a was not asked for b\'s resource');
      const ra = await g.request('resources/read', { uri: 'file:///a/two.txt' });
      assert.deepEqual(ra, { contents: [{ uri: 'file:///a/two.txt', text: 'a read file:///a/two.txt' }] });
      assert.equal(g.server('b').requests('resources/read').length, 1);
    });
  });

  it('a URI no list has shown yet is found by listing again; a URI nobody lists is never shown to any upstream', async () => {
    await withGateway([A, B], undefined, async (g) => {
      const r = await g.request('resources/read', { uri: 'mem://b/note' });
      assert.deepEqual(r, { contents: [{ uri: 'mem://b/note', text: 'b read mem://b/note' }] });
      assert.equal(g.server('a').requests('resources/read').length, 0, 'a was never asked about b\'s URI');
      await assert.rejects(g.request('resources/read', { uri: 'nowhere://x' }), rpcError(-32002, 'Resource nowhere://x not found'));
      assert.equal(g.server('a').requests('resources/read').length + g.server('b').requests('resources/read').length, 1);
      await assert.rejects(g.request('resources/read', { uri: 7 }), rpcError(-32602));
    });
  });

  it('merges capabilities and instructions of both upstreams', async () => {
    await withGateway([A, B], undefined, async (g) => {
      assert.deepEqual(g.session.capabilities(), {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
        logging: {},
      });
      assert.equal(g.session.instructions(), '## a\nUse a for files.\n\n## b\nUse b for memory.');
    });
  });

  it('sends prompts/list only to upstreams that offer prompts, and prompts/get by prefix', async () => {
    await withGateway([A, B], undefined, async (g) => {
      const r = await g.request('prompts/list');
      assert.deepEqual(names(r, 'prompts'), ['b__greet', 'b__bye']);
      assert.equal(r.nextCursor, undefined);
      assert.equal(g.server('a').requests('prompts/list').length, 0);
      const p = await g.request('prompts/get', { name: 'b__greet', arguments: { who: 'x' } });
      assert.equal(p.description, 'b:greet');
      assert.deepEqual(g.server('b').requests('prompts/get')[0]!.params, { name: 'greet', arguments: { who: 'x' } });
    });
  });

  it('leaves out an upstream whose list fails, and fails only when every upstream fails', async () => {
    await withGateway([{ ...A, failing: ['tools/list'] }, B], undefined, async (g) => {
      const r = await g.request('tools/list');
      assert.deepEqual(names(r), ['b__b1', 'b__b2']);
    });
    await withGateway([{ ...A, failing: ['tools/list'] }, { ...B, failing: ['tools/list'] }], undefined, async (g) => {
      await assert.rejects(g.request('tools/list'), rpcError(-32603, /is broken/));
    });
  });

  it('drops a tool whose prefixed name has a character the MCP name rule forbids, and keeps a long one (the tools stage shortens it)', async () => {
    const long = 'x'.repeat(126);
    await withGateway([{ ...A, tools: [tool(long), tool('ok'), tool('has space')] }, B], undefined, async (g) => {
      const r = await g.request('tools/list');
      assert.deepEqual(names(r), [`a__${long}`, 'a__ok', 'b__b1', 'b__b2']);
    });
  });

  it('answers a method it does not route with -32601', async () => {
    await withGateway([A, B], undefined, async (g) => {
      await assert.rejects(g.request('sampling/createMessage', {}), rpcError(ErrorCode.MethodNotFound, 'Method not found: sampling/createMessage'));
      await assert.rejects(g.request('tools/frobnicate'), rpcError(-32601));
      await assert.rejects(g.request('initialize', {}), rpcError(-32601));
    });
  });

  it('answers methods named after Object.prototype members with -32601 and sends them to no upstream', async () => {
    await withGateway([A, B], undefined, async (g) => {
      for (const method of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
        await assert.rejects(g.request(method, {}), rpcError(ErrorCode.MethodNotFound), method);
        for (const s of g.servers.values()) assert.deepEqual(s.requests(method), [], `${method} reached ${s.spec.name}`);
      }
    });
  });

  it('broadcasts an upstream\'s list_changed notification to the session', async () => {
    await withGateway([A, B], undefined, async (g) => {
      g.server('b').notify('notifications/tools/list_changed');
      await settle();
      await settle();
      assert.deepEqual(g.notes, [['notifications/tools/list_changed', undefined]]);
    });
  });
});

describe('RouterSession with one upstream', () => {
  it('prefix auto: names are not prefixed and calls pass the name as-is', async () => {
    await withGateway([A], 'auto', async (g) => {
      assert.equal(g.router.prefixNames, false);
      const r = await g.request('tools/list');
      assert.deepEqual(names(r), ['a1', 'a2']);
      const call = await g.request('tools/call', { name: 'a4' });
      assert.deepEqual(call.content, [{ type: 'text', text: 'a:a4' }]);
      assert.deepEqual(g.server('a').requests('tools/call')[0]!.params, { name: 'a4' });
      assert.equal(g.session.instructions(), 'Use a for files.');
    });
  });

  it('prefix auto: a name containing "__" is passed through whole', async () => {
    await withGateway([{ ...A, tools: [tool('do__it')] }], undefined, async (g) => {
      assert.deepEqual(names(await g.request('tools/list')), ['do__it']);
      const call = await g.request('tools/call', { name: 'do__it' });
      assert.deepEqual(call.content, [{ type: 'text', text: 'a:do__it' }]);
    });
  });

  it('prefix always: even a single upstream is prefixed', async () => {
    await withGateway([A], 'always', async (g) => {
      assert.deepEqual(names(await g.request('tools/list')), ['a__a1', 'a__a2']);
      const call = await g.request('tools/call', { name: 'a__a1' });
      assert.deepEqual(call.content, [{ type: 'text', text: 'a:a1' }]);
    });
  });

  it('single-upstream pagination passes the upstream\'s pages through the composite cursor', async () => {
    await withGateway([A], undefined, async (g) => {
      const all: string[] = [];
      let cursor: unknown;
      do {
        const r = await g.request('tools/list', cursor === undefined ? undefined : { cursor });
        all.push(...(names(r) as string[]));
        cursor = r.nextCursor;
      } while (cursor !== undefined && all.length < 100);
      assert.deepEqual(all, ['a1', 'a2', 'a3', 'a4', 'a5']);
    });
  });

  it('capabilities are those of the one upstream', async () => {
    await withGateway([A], undefined, async (g) => {
      assert.deepEqual(g.session.capabilities(), { tools: { listChanged: true }, resources: { listChanged: true, subscribe: true } });
    });
  });
});

// Keep the unused-type import meaningful for readers: messages crossing the memory pair are JsonRpcMessage.
export type { JsonRpcMessage, RequestId };

describe('resource subscriptions on a shared instance', () => {
  it('are reference-counted: one upstream subscribe, updates to each subscriber only, one unsubscribe when the last leaves', async () => {
    const b = await build([A]);
    try {
      const second = fakeCaller('session-2');
      const third = fakeCaller('session-3');
      const s2 = await b.router.open(second.caller);
      const s3 = await b.router.open(third.caller);
      const ctx = () => ({ signal: new Cancellation(), requestId: nextRequestId++ });
      const uri = 'file:///a/one.txt';
      assert.deepEqual(await b.session.request('resources/subscribe', { uri }, ctx()), {});
      assert.deepEqual(await s2.request('resources/subscribe', { uri }, ctx()), {});
      assert.equal(b.server('a').requests('resources/subscribe').length, 1);

      b.server('a').notify('notifications/resources/updated', { uri });
      await settle();
      const updates = (notes: Array<[string, unknown]>) => notes.filter(([m]) => m === 'notifications/resources/updated').length;
      assert.equal(updates(b.notes), 1);
      assert.equal(updates(second.notes), 1);
      assert.equal(updates(third.notes), 0, 'a session that did not subscribe hears nothing');

      await b.session.request('resources/unsubscribe', { uri }, ctx());
      assert.equal(b.server('a').requests('resources/unsubscribe').length, 0, 'another session still listens');
      b.server('a').notify('notifications/resources/updated', { uri });
      await settle();
      assert.equal(updates(b.notes), 1);
      assert.equal(updates(second.notes), 2);

      await s2.close(); // ending the session drops its subscriptions
      await settle();
      assert.equal(b.server('a').requests('resources/unsubscribe').length, 1);
      await s3.close();
    } finally {
      await b.close();
    }
  });
});

describe('a shared upstream of several processes', () => {
  it('asks for each next page the process that handed out its cursor: a cursor of one process\'s own is not sent to another', async () => {
    const P: ServerSpec = { ...A, name: 'p', tools: ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'].map((n) => tool(n)), poolSize: 2, processCursors: true };
    await withGateway([P, B], undefined, async (g) => {
      const seen: string[] = [];
      let page = await g.request('tools/list');
      seen.push(...names(page).map(String));
      for (let i = 0; i < 10 && page.nextCursor !== undefined; i++) {
        page = await g.request('tools/list', { cursor: page.nextCursor });
        seen.push(...names(page).map(String));
      }
      assert.deepEqual(seen.filter((n) => n.startsWith('p__')).sort(), ['p__p1', 'p__p2', 'p__p3', 'p__p4', 'p__p5', 'p__p6']);
    });
  });
});

describe('per-tenant sharing', () => {
  it('gives each tenant its own instances: sessions of one tenant share, tenants never do', async () => {
    const b = await build([{ ...A, sharing: 'per-tenant' }]);
    try {
      const ctx = () => ({ signal: new Cancellation(), requestId: nextRequestId++ });
      const sameTenant = await b.router.open(fakeCaller('session-2', 't1').caller);
      const otherTenant = await b.router.open(fakeCaller('session-3', 't2').caller);
      for (const s of [b.session, sameTenant, otherTenant]) await s.request('tools/call', { name: 'a1' }, ctx());
      const pool = b.router.pool('a')!;
      const t1Instances = pool.instancesFor(sameTenant.caller);
      const t2Instances = pool.instancesFor(otherTenant.caller);
      assert.deepEqual(pool.instancesFor(b.session.caller), t1Instances, 'sessions of one tenant share');
      assert.equal(t1Instances.length, 1);
      assert.equal(t2Instances.length, 1);
      assert.notEqual(t1Instances[0], t2Instances[0]);
      assert.equal(pool.instances.size, 2);
      // Each tenant's instance initialized its own upstream connection.
      assert.equal(b.server('a').requests('initialize').length, 2);
      await sameTenant.close();
      await otherTenant.close();
    } finally {
      await b.close();
    }
  });
});

describe('tool pinning over repeated listings', () => {
  // Withholds every tool named run_*: new tools, never approved.
  const gate: ToolGate = { check: (_u, t) => (String(t.name).startsWith('run_') ? { message: 'a new tool', details: { rule: 'pinning.new' } } : undefined) };

  it('keeps of an instance\'s withheld listings only what its latest complete listing withholds: an upstream naming a new tool on every list holds no more', async () => {
    const spec: ServerSpec = { name: 'a', capabilities: { tools: {} }, tools: [tool('keep')], pageSize: 10 };
    const b = await build([spec], undefined, gate);
    try {
      const pool = b.router.pool('a')!;
      for (let i = 0; i < 10_000; i++) {
        spec.tools = [tool('keep'), tool(`run_${i}`)];
        assert.deepEqual(names(await b.request('tools/list')), ['keep']);
      }
      const other = {}; // an instance other than the one listing: what calls through it are checked against
      assert.equal(pool.withheld.against('run_0', other).length, 0, 'a tool the upstream no longer lists is still marked withheld');
      assert.equal(pool.withheld.against('run_9999', other).length, 1, 'the tool the latest listing withheld is marked');
      assert.equal(pool.withheld.size, 1);
    } finally {
      await b.close();
    }
  });
});

describe('URIs no list names', () => {
  it('cost one listing of resources and templates while nothing changed, however many are asked about, and one more after resources/list_changed', async () => {
    await withGateway([A, B], undefined, async (g) => {
      const listings = () => ['a', 'b'].flatMap((n) => g.server(n).log).filter((r) => r.method === 'resources/list' || r.method === 'resources/templates/list').length;
      for (let i = 0; i < 50; i++) {
        await assert.rejects(g.request('resources/subscribe', { uri: `file:///a/random-${i}.txt` }), rpcError(-32002));
      }
      const once = listings();
      assert.ok(once > 0 && once <= 4, `${once} list requests for 50 subscribes`);
      await assert.rejects(g.request('resources/read', { uri: 'file:///a/random-50.txt' }), rpcError(-32002));
      assert.equal(listings(), once, 'a read of a URI no list names lists again');
      // Learned from that one listing: a URI the upstream lists is subscribed to at once.
      assert.deepEqual(await g.request('resources/subscribe', { uri: 'file:///a/two.txt' }), {});

      // The upstream says its resources changed: the next unknown URI lists again (once).
      A.resources!.push({ uri: 'file:///a/three.txt', name: 'three' });
      try {
        g.server('a').notify('notifications/resources/list_changed');
        await settle();
        assert.deepEqual(await g.request('resources/subscribe', { uri: 'file:///a/three.txt' }), {});
        const twice = listings();
        assert.ok(twice > once);
        await assert.rejects(g.request('resources/subscribe', { uri: 'file:///a/random-51.txt' }), rpcError(-32002));
        assert.equal(listings(), twice);
      } finally {
        A.resources!.pop();
      }
    });
  });
});

describe('the listing that finds a URI\'s owner', () => {
  it('learns every page of the upstreams that answer, with failureMode closed too: an upstream that is down does not make another\'s resources "not found"', async () => {
    const three: ServerSpec = { ...A, resources: [...A.resources!, { uri: 'file:///a/three.txt', name: 'three' }] };
    const b = await build([three, { ...B, failing: ['resources/list', 'resources/templates/list'] }], undefined, undefined, { failureMode: 'closed' });
    try {
      await assert.rejects(b.request('resources/list'), 'the list itself fails, as failureMode closed says');
      const read = await b.request('resources/read', { uri: 'file:///a/three.txt' });
      assert.deepEqual(read, { contents: [{ uri: 'file:///a/three.txt', text: 'a read file:///a/three.txt' }] });
    } finally {
      await b.close();
    }
  });

  it('is not ended by the cancellation of the request that started it: a request sharing it, and the next one, still find the URI', async () => {
    await withGateway([A, B], undefined, async (g) => {
      g.server('a').held.add('resources/list');
      const first = new Cancellation();
      const cancelled = g.session.request('resources/read', { uri: 'file:///a/two.txt' }, { signal: first, requestId: 'r1' });
      const sharing = g.session.request('resources/read', { uri: 'file:///a/two.txt' }, { signal: new Cancellation(), requestId: 'r2' });
      for (let i = 0; i < 20 && g.server('a').requests('resources/list').length === 0; i++) await settle();
      assert.equal(g.server('a').requests('resources/list').length, 1, 'the listing is on its way');
      first.abort('the client cancelled r1');
      await assert.rejects(cancelled);
      g.server('a').release();
      assert.deepEqual(await sharing, { contents: [{ uri: 'file:///a/two.txt', text: 'a read file:///a/two.txt' }] });
      const later = await g.request('resources/read', { uri: 'file:///a/one.txt' });
      assert.deepEqual(later, { contents: [{ uri: 'file:///a/one.txt', text: 'a read file:///a/one.txt' }] });
    });
  });
});

describe('completion/complete on a resource template', () => {
  const T1: ServerSpec = { name: 'a', capabilities: { resources: {}, completions: {} }, resourceTemplates: [{ uriTemplate: 'notes://{id}', name: 'note' }] };
  const T2: ServerSpec = { name: 'b', capabilities: { resources: {}, completions: {} }, resourceTemplates: [{ uriTemplate: 'notes://{owner}/{id}', name: 'owned' }] };

  it('goes to the upstream that lists the template, though another lists one with the same text before its first "{"', async () => {
    await withGateway([T1, T2], undefined, async (g) => {
      await g.request('resources/templates/list');
      const a = await g.request('completion/complete', { ref: { type: 'ref/resource', uri: 'notes://{id}' }, argument: { name: 'id', value: '' } });
      assert.deepEqual(a, { completion: { values: ['a:notes://{id}'], hasMore: false } });
      const b = await g.request('completion/complete', { ref: { type: 'ref/resource', uri: 'notes://{owner}/{id}' }, argument: { name: 'id', value: '' } });
      assert.deepEqual(b, { completion: { values: ['b:notes://{owner}/{id}'], hasMore: false } });
    });
  });

  it('on a template this endpoint has not seen listed yet (its lists were made on another replica, or before a reload) lists again, as a read does', async () => {
    await withGateway([T1, T2], undefined, async (g) => {
      const a = await g.request('completion/complete', { ref: { type: 'ref/resource', uri: 'notes://{id}' }, argument: { name: 'id', value: '' } });
      assert.deepEqual(a, { completion: { values: ['a:notes://{id}'], hasMore: false } });
      await assert.rejects(g.request('completion/complete', { ref: { type: 'ref/resource', uri: 'other://{x}' }, argument: { name: 'x', value: '' } }), rpcError(-32602, 'Resource template other://{x} not found'));
      assert.equal(g.server('b').requests('completion/complete').length, 0, 'b was never asked');
    });
  });
});

describe('what an endpoint learns of URI templates', () => {
  it('a URI of a template withheld for its hidden text is still read from that template\'s upstream, on an endpoint of several as of one (its contents are scanned as a result)', async () => {
    const T1: ServerSpec = { name: 'a', capabilities: { resources: {} }, resourceTemplates: [{ uriTemplate: 'notes://{id}', name: 'note', description: 'Notes.\u200b' }] };
    const T2: ServerSpec = { name: 'b', capabilities: { resources: {} }, resources: [{ uri: 'mem://b/x', name: 'x' }] };
    const screen = new HiddenTextGuard({ definitions: 'block', results: 'off', patterns: [], imageHosts: [] }, '/mcp').for(new TenantPolicy({ ...ALLOW_ALL, name: 't1' } as never))!;
    await withGateway([T1, T2], undefined, async (g) => {
      const ask = (method: string, params?: Record<string, unknown>) => g.session.request(method, params, { signal: new Cancellation(), requestId: nextRequestId++, screen });
      assert.deepEqual(await ask('resources/templates/list'), { resourceTemplates: [] }, 'the template is withheld');
      await ask('resources/read', { uri: 'notes://7' }).catch(() => {});
      assert.deepEqual(g.server('a').requests('resources/read').map((r) => r.params?.uri), ['notes://7']);
      assert.equal(g.server('b').requests('resources/read').length, 0);
    });
  });

  it('routes a read to the upstream whose template the URI matches, though another upstream\'s template has the same text before its first "{"', async () => {
    const T1: ServerSpec = { name: 'a', capabilities: { resources: {} }, resourceTemplates: [{ uriTemplate: 'notes://{id}', name: 'note' }] };
    const T2: ServerSpec = { name: 'b', capabilities: { resources: {} }, resourceTemplates: [{ uriTemplate: 'notes://{owner}/{id}', name: 'owned' }] };
    await withGateway([T1, T2], undefined, async (g) => {
      await g.request('resources/templates/list');
      const reads = (n: string) => g.server(n).requests('resources/read').map((r) => r.params?.uri);
      await g.request('resources/read', { uri: 'notes://7' }).catch(() => {});
      await g.request('resources/read', { uri: 'notes://alice/7' }).catch(() => {});
      assert.deepEqual(reads('a'), ['notes://7']);
      assert.deepEqual(reads('b'), ['notes://alice/7']);
      assert.equal(g.router.ownerOfUri('notes://7'), 'a');
      assert.equal(g.router.ownerOfUri('notes://alice/7'), 'b');
      // A URI past MAX_MATCHED_URI_CHARS is not matched against templates (megabytes cost seconds): the prefix rule, which the last listed of equal prefixes holds.
      assert.equal(g.router.ownerOfUri(`notes://${'7'.repeat(MAX_MATCHED_URI_CHARS - 100)}`), 'a');
      assert.equal(g.router.ownerOfUri(`notes://${'7'.repeat(MAX_MATCHED_URI_CHARS)}`), 'b');
    });
  });

  it('makes room for templates listed after 10,000 others: the newest are routed, not left "not found" for the endpoint\'s life', async () => {
    const T1: ServerSpec = { name: 'a', capabilities: { resources: {}, completions: {} }, resourceTemplates: [{ uriTemplate: 'fresh://{id}', name: 'fresh' }] };
    const T2: ServerSpec = { name: 'b', capabilities: { resources: {}, completions: {} }, resourceTemplates: [] };
    await withGateway([T1, T2], undefined, async (g) => {
      // Templates an upstream listed over a long life and no longer lists (a reload alone forgets them).
      for (let i = 0; i < 10_000; i++) g.router.learnTemplate(`old${i}://{x}`, 'b');
      await g.request('resources/templates/list');
      assert.equal(g.router.ownerOfTemplate('fresh://{id}'), 'a');
      assert.equal(g.router.ownerOfUri('fresh://42'), 'a');
      const r = await g.request('completion/complete', { ref: { type: 'ref/resource', uri: 'fresh://{id}' }, argument: { name: 'id', value: '' } });
      assert.deepEqual(r, { completion: { values: ['a:fresh://{id}'], hasMore: false } });
    });
  });
});

describe('resource subscriptions across a reload', () => {
  it('follow an upstream a reload replaced to its new pool: the new instance is subscribed and its updates reach the session', async () => {
    await withGateway([A, B], undefined, async (g) => {
      await g.request('resources/list');
      assert.deepEqual(await g.request('resources/subscribe', { uri: 'file:///a/one.txt' }), {});
      // A reload changed upstream a (its command, its env): a new pool, the old one drains and stops.
      const old = g.pools.get('a')!;
      await g.replace({ ...A });
      const stale = g.router.reconfigure(g.router.config, g.pools).map((s) => s.rebind());
      assert.deepEqual((await Promise.all(stale)).flat(), []);
      await old.close();
      for (let i = 0; i < 20 && g.server('a').requests('resources/subscribe').length === 0; i++) await settle();
      assert.equal(g.server('a').requests('resources/subscribe').length, 1, 'the new instance was subscribed');
      g.notes.length = 0;
      g.server('a').notify('notifications/resources/updated', { uri: 'file:///a/one.txt' });
      for (let i = 0; i < 20 && g.notes.length === 0; i++) await settle();
      assert.deepEqual(g.notes, [['notifications/resources/updated', { uri: 'file:///a/one.txt' }]]);
      // And the session's unsubscribe reaches the instance that holds the subscription now.
      assert.deepEqual(await g.request('resources/unsubscribe', { uri: 'file:///a/one.txt' }), {});
      assert.equal(g.server('a').requests('resources/unsubscribe').length, 1);
    });
  });
});

describe('an unsubscribe sent while the subscribe to the URI is on its way', () => {
  it('undoes that subscribe: no update reaches the session after both are answered, and the upstream is told to drop it', async () => {
    await withGateway([A, B], undefined, async (g) => {
      await g.request('resources/list');
      g.server('a').held.add('resources/subscribe');
      const subscribing = g.request('resources/subscribe', { uri: 'file:///a/one.txt' });
      for (let i = 0; i < 20 && g.server('a').requests('resources/subscribe').length === 0; i++) await settle();
      const unsubscribing = g.request('resources/unsubscribe', { uri: 'file:///a/one.txt' });
      await settle();
      g.server('a').release();
      assert.deepEqual(await subscribing, {});
      assert.deepEqual(await unsubscribing, {});
      assert.deepEqual(g.session.subscribedUris(), []);
      assert.equal(g.server('a').requests('resources/unsubscribe').length, 1, 'the upstream was told to drop it');
      g.notes.length = 0;
      g.server('a').notify('notifications/resources/updated', { uri: 'file:///a/one.txt' });
      for (let i = 0; i < 5; i++) await settle();
      assert.deepEqual(g.notes, []);
    });
  });
});

describe('a burst of tools/list_changed from a shared upstream', () => {
  it('lists that upstream\'s tools again once or twice, not once per notification', async () => {
    await withGateway([A, B], undefined, async (g) => {
      await g.router.prepareTools();
      // Listings, not pages: each starts with a request without a cursor.
      const listings = () => g.server('b').requests('tools/list').filter((r) => r.params?.cursor === undefined).length;
      const before = listings();
      for (let i = 0; i < 6; i++) g.server('b').notify('notifications/tools/list_changed');
      for (let i = 0; i < 50; i++) await settle();
      const after = listings() - before;
      assert.ok(after >= 1 && after <= 2, `${after} listings for a burst of 6`);
    });
  });
});

describe('resource subscriptions of one session', () => {
  it(`are bounded (MAX_SUBSCRIPTIONS_PER_SESSION): one more is refused saying so, one held is still {}, and room made by an unsubscribe is used (found by a review)`, async () => {
    const T: ServerSpec = { name: 'a', capabilities: { resources: { subscribe: true } }, resourceTemplates: [{ uriTemplate: 'notes://{id}', name: 'note' }] };
    await withGateway([T, B], undefined, async (g) => {
      await g.request('resources/templates/list');
      for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_SESSION; i++) assert.deepEqual(await g.request('resources/subscribe', { uri: `notes://${i}` }), {});
      await assert.rejects(g.request('resources/subscribe', { uri: 'notes://one-more' }), (e: unknown) => e instanceof GatewayError && e.code === 'SWB_SUBSCRIPTION_LIMIT' && /unsubscribe from one first/.test(e.message));
      assert.equal(g.server('a').requests('resources/subscribe').length, MAX_SUBSCRIPTIONS_PER_SESSION, 'the refused one never went upstream');
      assert.deepEqual(await g.request('resources/subscribe', { uri: 'notes://7' }), {}, 'one it holds already');
      await g.request('resources/unsubscribe', { uri: 'notes://7' });
      assert.deepEqual(await g.request('resources/subscribe', { uri: 'notes://one-more' }), {});
    });
  });
});
