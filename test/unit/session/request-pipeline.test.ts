// Each stage of a client request's path alone, against a stub session (guard, observer, router), and
// the composition. Integration tests (policy, argument-rules, operations) prove the wiring.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import { ErrorCode } from '../../../src/jsonrpc/error-codes.js';
import { JsonRpcError } from '../../../src/jsonrpc/json-rpc-error.js';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import { RequestTable } from '../../../src/jsonrpc/request-table.js';
import { methodSpec, targetOf } from '../../../src/jsonrpc/methods.js';
import { notFound } from '../../../src/jsonrpc/not-found.js';
import type { JsonRpcResponse, RequestId } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { loadTracing } from '../../../src/observability/load-tracing.js';
import { NO_TRACING, type TraceSpan } from '../../../src/observability/tracing.js';
import type { ConfirmRule } from '../../../src/policy/confirm-rules.js';
import type { Decision } from '../../../src/policy/decision.js';
import type { SessionGuard } from '../../../src/policy/session-guard.js';
import type { EndpointRouter, RouterSession } from '../../../src/router/index.js';
import { compose, type Next, type PipelineHost, type RequestContext, type Stage } from '../../../src/session/request-pipeline.js';
import { argumentsStage, clientRequestPipeline, confirmStage, lifecycleStage, limitsStage, observeStage, policyStage, routeStage, toolsStage, traceStage } from '../../../src/session/stages/index.js';
import { Curation } from '../../../src/router/curation.js';
import { ToolView } from '../../../src/router/tool-view.js';
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js';

type Params = Record<string, unknown> | undefined;

interface Stub {
  host: PipelineHost;
  denials: string[];
  limited: string[];
  done: Array<Record<string, unknown>>;
  audit: Array<{ method: string; outcome: string; rule: string; upstream: string | undefined; confirmation?: string }>;
  refused: string[];
  routed: string[];
  released: number;
  changed: string[];
  abandoned: RequestId[];
  /** Confirmation outcomes counted, and the elicitations put to the client. */
  confirmations: string[];
  asked: Array<{ params: Record<string, unknown>; timeoutMs: number }>;
}

interface StubOptions {
  state?: PipelineHost['state'];
  /** What whenActive() resolves to: whether notifications/initialized arrived in time. */
  active?: boolean;
  decide?: (kind: string, name: string) => Decision;
  violation?: { rule: string; tool: string };
  slot?: boolean;
  route?: (method: string, params: Params, signal: Cancellation, ctx: { toolFound?: boolean | undefined }) => Promise<Record<string, unknown>>;
  /** The tenant's confirmation rule that matches every tools/call (none by default). */
  confirm?: ConfirmRule;
  /** Whether the client declared form elicitation (default yes), and how it answers. */
  elicits?: boolean;
  elicit?: (params: Record<string, unknown>, signal: Cancellation) => Promise<Record<string, unknown>>;
}

function stub(o: StubOptions = {}): Stub {
  const s: Stub = { denials: [], limited: [], done: [], audit: [], refused: [], routed: [], released: 0, changed: [], abandoned: [], confirmations: [], asked: [] } as unknown as Stub;
  const guard = {
    check: (method: string, params: Params) => {
      const t = targetOf(method, params);
      return t && { ...(o.decide ?? (() => ({ allowed: true, rule: 'tools.allow:*', reason: 'allowed' })))(t.kind, t.name), ...t };
    },
    checkArguments: (method: string) => (method === 'tools/call' ? o.violation : undefined),
    record: (method: string, _p: Params, d: Decision, outcome: string, _at: number, _r: unknown, upstream: string | undefined, _b?: number, confirmation?: string) =>
      s.audit.push({ method, outcome, rule: d.rule, upstream, ...(confirmation ? { confirmation } : {}) }),
    confirmRule: () => o.confirm,
    unconfirmed: (_p: Params, rule: ConfirmRule, confirmation: string, _at: number, upstream: string | undefined, outcome = 'denied') =>
      s.audit.push({ method: 'tools/call', outcome, rule: `confirm:${rule.match}`, upstream, confirmation }),
    refused: (_m: string, _p: Params, rule: string) => s.refused.push(rule),
    acquireRequest: () => o.slot ?? true,
    releaseRequest: () => void s.released++,
    filterList: (_m: string, r: Record<string, unknown>) => r,
    audits: (m: string) => methodSpec(m)?.audited === true,
    tenant: { name: 't', config: { limits: { concurrentRequests: 1 } }, confirmRules: o.confirm ? {} : undefined },
  } as unknown as SessionGuard;
  const router = {
    request: (method: string, params: Params, ctx: { signal: Cancellation; toolFound?: boolean | undefined }) => {
      s.routed.push(method);
      return (o.route ?? (async () => ({ ok: true })))(method, params, ctx.signal, ctx);
    },
    upstreamOf: (method: string) => (methodSpec(method)?.attributed ? 'up' : undefined),
    curation: { empty: true },
  } as unknown as RouterSession;
  s.host = {
    state: o.state ?? 'ACTIVE',
    era: 'legacy',
    guard,
    observer: {
      sessionOpened() {},
      sessionClosed() {},
      requestDone: (r) => s.done.push(r),
      denied: (reason) => s.denials.push(reason),
      rateLimited: (limit) => s.limited.push(limit),
      confirmation: (_tenant, outcome) => s.confirmations.push(outcome),
      elicitationRefused() {},
    },
    endpoint: { config: { path: '/mcp' }, prefixNames: false, pools: [], tools: { searchMode: false, maxNameLength: 64 }, tracing: NO_TRACING, hiddenText: { for: () => undefined } } as unknown as EndpointRouter,
    router: o.state === 'UNINITIALIZED' ? undefined : router,
    logger: createLogger('silent'),
    inflight: new RequestTable(),
    initialize: async (req) => ({ jsonrpc: '2.0', id: req.id, result: { initialized: true } }),
    whenActive: async () => o.active ?? true,
    progress() {},
    stateChanged: (method) => void s.changed.push(method),
    release: (id) => void s.abandoned.push(id),
    canElicit: () => o.elicits ?? true,
    elicit: (params, _id, signal, timeoutMs) => {
      s.asked.push({ params, timeoutMs });
      return (o.elicit ?? (async () => ({ action: 'accept', content: { confirm: true } })))(params, signal);
    },
  };
  return s;
}

function ctxOf(s: Stub, method: string, params?: Record<string, unknown>, id: RequestId = 1): RequestContext {
  return { req: { jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }, spec: methodSpec(method), host: s.host, startedAt: Date.now(), t0: performance.now() };
}

const passed: () => Promise<JsonRpcResponse> = async () => ({ jsonrpc: '2.0', id: 1, result: { passed: true } });
const errorOf = (r: JsonRpcResponse | undefined) => (r && 'error' in r ? r.error : undefined);

describe('compose', () => {
  it('runs stages in order, each around the ones after it', async () => {
    const trail: string[] = [];
    const stage = (name: string): Stage => async (ctx, next) => {
      trail.push(`>${name}`);
      const r = await next(ctx);
      trail.push(`<${name}`);
      return r;
    };
    await compose([stage('a'), stage('b'), async () => ({ jsonrpc: '2.0', id: 1, result: {} })])(ctxOf(stub(), 'ping'));
    assert.deepEqual(trail, ['>a', '>b', '<b', '<a']);
  });
});

describe('lifecycle stage', () => {
  it('answers ping and initialize itself', async () => {
    const s = stub({ state: 'UNINITIALIZED' });
    assert.deepEqual(await lifecycleStage(ctxOf(s, 'ping'), passed), { jsonrpc: '2.0', id: 1, result: {} });
    assert.deepEqual((await lifecycleStage(ctxOf(s, 'initialize', {}), passed) as { result: unknown }).result, { initialized: true });
  });

  it('refuses a request before initialize, and an id already in flight, with -32600', async () => {
    assert.equal(errorOf(await lifecycleStage(ctxOf(stub({ state: 'UNINITIALIZED' }), 'tools/list'), passed))?.code, -32600);
    const s = stub();
    s.host.inflight.set(5, new Cancellation());
    assert.equal(errorOf(await lifecycleStage(ctxOf(s, 'tools/list', undefined, 5), passed))?.code, -32600);
    assert.deepEqual(await lifecycleStage(ctxOf(s, 'tools/list', undefined, 6), passed), await passed());
    // A ping too: answered {}, it was taken for the answer of the request in flight.
    assert.equal(errorOf(await lifecycleStage(ctxOf(s, 'ping', undefined, 5), passed))?.code, -32600);
    assert.ok(s.host.inflight.has(5), 'the request in flight keeps its id');
  });
});

describe('trace stage', () => {
  it('a request reusing the id of one in flight leaves the original its span in the session\'s table', async () => {
    const collector = await startOtlpReceiver();
    const tracing = await loadTracing({ enabled: true, endpoint: collector.url, protocol: 'http/json', sampleRatio: 1, headers: {}, recordPrincipal: false }, createLogger('silent'), {});
    try {
      const s = stub();
      const spans = new RequestTable<TraceSpan>();
      s.host = { ...s.host, endpoint: { ...s.host.endpoint, tracing } as EndpointRouter, spans };
      let answer!: () => void;
      const held = new Promise<void>((resolve) => (answer = resolve));
      const run = compose([traceStage, lifecycleStage, async () => (await held, passed())]);
      const original = ctxOf(s, 'tools/list', undefined, 7);
      const answered = run(original);
      assert.equal(spans.get(7), original.span);
      for (const method of ['tools/list', 'ping']) assert.equal(errorOf(await run(ctxOf(s, method, undefined, 7)))?.code, -32600);
      assert.equal(spans.get(7), original.span, 'the original\'s span is still the parent of what is asked for it');
      answer();
      await answered;
      assert.equal(spans.size, 0);
    } finally {
      await tracing.shutdown();
      await collector.close();
    }
  });
});

describe('lifecycle stage before notifications/initialized', () => {
  it('hands a request on once the notification arrives within the wait', async () => {
    assert.deepEqual(await lifecycleStage(ctxOf(stub({ state: 'INITIALIZING', active: true }), 'tools/list'), passed), await passed());
  });

  it('refuses it with -32600 when the notification does not come; ping needs none', async () => {
    const s = stub({ state: 'INITIALIZING', active: false });
    const err = errorOf(await lifecycleStage(ctxOf(s, 'tools/list'), passed));
    assert.equal(err?.code, -32600);
    assert.match(err!.message, /send notifications\/initialized first/);
    assert.deepEqual(await lifecycleStage(ctxOf(s, 'ping'), passed), { jsonrpc: '2.0', id: 1, result: {} });
  });
});

describe('policy stage', () => {
  it('hands on what it allows, and requests without a target', async () => {
    const s = stub();
    assert.deepEqual(await policyStage(ctxOf(s, 'tools/call', { name: 'x' }), passed), await passed());
    assert.deepEqual(await policyStage(ctxOf(s, 'tools/list'), passed), await passed());
    assert.deepEqual(s.done, []);
  });

  for (const [reason, rule] of [['deny_rule', 'tools.deny:x'], ['not_allowed', 'tools: no allow pattern matches'], ['missing_scope', 'tools.allow:x (missing scope s)']] as const) {
    it(`answers a denial (${reason}) exactly like an unknown name, counted by its reason code`, async () => {
      const s = stub({ decide: () => ({ allowed: false, rule, reason }) });
      const r = await policyStage(ctxOf(s, 'tools/call', { name: 'x' }), passed);
      assert.deepEqual(errorOf(r), notFound('tool', 'x').toObject());
      assert.deepEqual(s.denials, [reason]);
      assert.deepEqual(s.audit, [{ method: 'tools/call', outcome: 'denied', rule, upstream: undefined }]);
      assert.deepEqual(s.done, [{ method: 'tools/call', endpoint: '/mcp', upstream: 'none', outcome: 'denied', seconds: s.done[0]!.seconds, tool: 'unknown', era: 'legacy' }]);
    });
  }

  it('words a denied completion on a resource as an unknown template', async () => {
    const s = stub({ decide: () => ({ allowed: false, rule: 'resources.deny:*', reason: 'deny_rule' }) });
    const r = await policyStage(ctxOf(s, 'completion/complete', { ref: { type: 'ref/resource', uri: 'r://{x}' } }), passed);
    assert.deepEqual(errorOf(r), notFound('template', 'r://{x}').toObject());
    assert.equal(s.done[0]!.tool, undefined);
  });
});

describe('arguments stage', () => {
  it('refuses a call its rules refuse with SWB_ARGUMENT_REFUSED, before routing', async () => {
    const s = stub({ violation: { rule: 'no-etc', tool: 'fs__read' } });
    const r = await argumentsStage(ctxOf(s, 'tools/call', { name: 'read' }), passed);
    assert.equal(errorOf(r)?.code, -32602);
    assert.equal((errorOf(r)?.data as Record<string, unknown>).code, 'SWB_ARGUMENT_REFUSED');
    assert.deepEqual(s.denials, ['argument_rule']);
    assert.deepEqual(s.refused, ['arguments:no-etc']);
    assert.equal(s.done[0]!.tool, 'unknown');
  });
});

describe('limits stage', () => {
  it('holds a slot for the rest of the path and releases it after', async () => {
    const s = stub();
    let releasedInside = -1;
    await limitsStage(ctxOf(s, 'tools/list'), async () => {
      releasedInside = s.released;
      return undefined;
    });
    assert.equal(releasedInside, 0);
    assert.equal(s.released, 1);
  });

  it('refuses at the limit with SWB_RATE_LIMITED, counted, and releases nothing', async () => {
    const s = stub({ slot: false });
    const r = await limitsStage(ctxOf(s, 'tools/list'), passed);
    assert.equal((errorOf(r)?.data as Record<string, unknown>).code, 'SWB_RATE_LIMITED');
    assert.deepEqual(s.limited, ['concurrent_requests']);
    assert.deepEqual(s.refused, ['limits.concurrentRequests']);
    assert.deepEqual(s.done.map((d) => [d.method, d.outcome, d.upstream]), [['tools/list', 'rate_limited', 'none']], 'counted in the request metrics');
    assert.equal(s.released, 0);
  });
});

describe('route and observe stages', () => {
  const run = (s: Stub, method: string, params?: Record<string, unknown>) => {
    const ctx = ctxOf(s, method, params);
    return compose([policyStage, observeStage, routeStage])(ctx);
  };

  it('answers with the router\'s result and records ok, with the upstream it reached', async () => {
    const s = stub({ route: async () => ({ content: [] }) });
    assert.deepEqual(await run(s, 'tools/call', { name: 'echo' }), { jsonrpc: '2.0', id: 1, result: { content: [] } });
    assert.deepEqual(s.audit, [{ method: 'tools/call', outcome: 'ok', rule: 'tools.allow:*', upstream: 'up' }]);
    assert.deepEqual({ ...s.done[0], seconds: 0 }, { method: 'tools/call', endpoint: '/mcp', upstream: 'up', outcome: 'ok', seconds: 0, tool: 'echo', era: 'legacy' });
    assert.equal(s.host.inflight.size, 0);
  });

  it('labels a tool the router does not know as "unknown" by the error\'s type, and a tool error as tool_error', async () => {
    const s = stub({ route: async (_m, p) => (p?.name === 'ghost' ? Promise.reject(notFound('tool', 'ghost')) : { isError: true }) });
    await run(s, 'tools/call', { name: 'ghost' });
    await run(s, 'tools/call', { name: 'flaky' });
    assert.deepEqual(s.done.map((d) => [d.tool, d.outcome]), [['unknown', 'error'], ['flaky', 'tool_error']]);
  });

  it('an upstream error that merely says "not found" keeps the tool\'s label', async () => {
    // The router found the definition (the tool exists), then the upstream failed.
    const s = stub({ route: async (_m, _p, _s, ctx) => ((ctx.toolFound = true), Promise.reject(new GatewayError('SWB_UPSTREAM_PROTOCOL', 'thing not found'))) });
    await run(s, 'tools/call', { name: 'real' });
    assert.equal(s.done[0]!.tool, 'real');
  });

  it('a call that failed before its definition was found (the upstream unreachable) is labelled "unknown"', async () => {
    const s = stub({ route: async () => Promise.reject(new GatewayError('SWB_UPSTREAM_UNAVAILABLE', 'upstream "up" could not be reached')) });
    await run(s, 'tools/call', { name: 'made-up-7f3' });
    assert.equal(s.done[0]!.tool, 'unknown');
  });

  it('labels lists "all" upstreams and other methods "none"', async () => {
    const s = stub();
    await run(s, 'tools/list');
    await run(s, 'resources/subscribe', { uri: 'r://a' });
    assert.deepEqual(s.done.map((d) => d.upstream), ['all', 'none']);
    assert.deepEqual(s.changed, ['resources/subscribe']);
  });

  it('sends nothing for a request the client cancelled, and records it as cancelled', async () => {
    const s = stub({ route: (_m, _p, signal) => new Promise((_r, reject) => signal.onAbort(() => reject(new Error('cancelled')))) });
    const ctx = ctxOf(s, 'tools/list');
    const answer = compose([observeStage, routeStage])(ctx);
    await new Promise((r) => setImmediate(r));
    s.host.inflight.get(1)!.abort('client');
    assert.equal(await answer, undefined);
    assert.deepEqual(s.abandoned, [1]);
    assert.equal(s.done[0]!.outcome, 'cancelled');
  });
});

describe('the client request pipeline', () => {
  it('a denied call never reaches the router; an allowed one does', async () => {
    const s = stub({ decide: (_k, name) => (name === 'no' ? { allowed: false, rule: 'tools.deny:no', reason: 'deny_rule' } : { allowed: true, rule: 'tools.allow:*', reason: 'allowed' }) });
    await clientRequestPipeline(ctxOf(s, 'tools/call', { name: 'no' }));
    await clientRequestPipeline(ctxOf(s, 'tools/call', { name: 'yes' }, 2));
    assert.deepEqual(s.routed, ['tools/call']);
    assert.equal(s.released, 1);
  });
});

describe('tools stage', () => {
  const view = new ToolView({
    catalogues: new Map([['gh', new Map([['create_issue', { name: 'create_issue', description: 'Open an issue.', inputSchema: { type: 'object' } }]])]]),
    curation: new Curation('', [{ exclude: [], overrides: { gh__create_issue: { name: 'new_issue' } } }]),
    maxNameLength: 64,
    prefixNames: true,
    reserved: ['search_tools', 'call_tool'],
  });
  /** The stub session on an endpoint in `exposure`, its router answering with the view above. */
  function toolsStub(exposure: 'all' | 'search', curated: boolean) {
    const s = stub();
    (s.host.endpoint as unknown as { tools: unknown }).tools = { searchMode: exposure === 'search', exposure, maxNameLength: 64 };
    Object.assign(s.host.router!, { curation: { empty: !curated }, toolView: async () => view, admit: async (_v: unknown, t: unknown[]) => t });
    (s.host.guard as unknown as { allowsTool: () => boolean }).allowsTool = () => true;
    return s;
  }
  const seen: RequestContext[] = [];
  const capture: Next = async (ctx) => {
    seen.push(ctx);
    return { jsonrpc: '2.0', id: ctx.req.id, result: {} };
  };

  it('hands an uncurated call by a name that fits on as it is (the same context)', async () => {
    const s = toolsStub('all', false);
    const ctx = ctxOf(s, 'tools/call', { name: 'gh__create_issue' });
    await toolsStage(ctx, capture);
    assert.equal(seen.at(-1), ctx);
  });

  it('hands call_tool on as the direct call by its canonical name, with the exposed name kept for errors', async () => {
    const s = toolsStub('search', true);
    await toolsStage(ctxOf(s, 'tools/call', { name: 'call_tool', arguments: { name: 'new_issue', arguments: { a: 1 } }, _meta: { progressToken: 7 } }), capture);
    const inner = seen.at(-1)!;
    assert.deepEqual(inner.req.params, { name: 'gh__create_issue', arguments: { a: 1 }, _meta: { progressToken: 7 } });
    assert.equal(inner.exposedName, 'new_issue');
    assert.equal(inner.checkDefinition, undefined);
  });

  it('hands a name the view does not expose on with a check that answers "not found"', async () => {
    const s = toolsStub('all', true);
    await toolsStage(ctxOf(s, 'tools/call', { name: 'gh__create_issue' }), capture);
    assert.throws(() => seen.at(-1)!.checkDefinition!({}), { message: 'Tool gh__create_issue not found' });
  });

  it('answers tools/list of a search-mode endpoint itself, counted once', async () => {
    const s = toolsStub('search', false);
    const r = await toolsStage(ctxOf(s, 'tools/list'), capture);
    assert.deepEqual(((r as unknown as { result: { tools: Array<{ name: string }> } }).result.tools).map((t) => t.name), ['search_tools', 'call_tool']);
    assert.deepEqual(s.routed, []);
    assert.equal(s.done.length, 1);
  });
});

describe('confirm stage', () => {
  const RULE: ConfirmRule = { match: 'fs__delete_*', message: 'Deleting cannot be undone.', timeoutMs: 5000, ifUnsupported: 'refuse' };
  const CALL = { name: 'fs__delete_repo', arguments: { repo: 'acme/site', token: 'hunter2-but-longer' } };
  /** Policy (the decision the audit line cites), the confirm stage, then observe and route, as in the pipeline. */
  const run = (s: Stub, ctx = ctxOf(s, 'tools/call', CALL)) => compose([policyStage, confirmStage, observeStage, routeStage])(ctx);
  const dataOf = (r: JsonRpcResponse | undefined) => errorOf(r)?.data as Record<string, unknown>;

  it('a tenant without rules, or a call no rule matches, passes without asking', async () => {
    const s = stub();
    assert.deepEqual(await run(s), { jsonrpc: '2.0', id: 1, result: { ok: true } });
    const t = stub({ confirm: RULE });
    (t.host.guard as unknown as { confirmRule: () => undefined }).confirmRule = () => undefined;
    await run(t);
    assert.deepEqual([s.asked.length, t.asked.length], [0, 0]);
    assert.deepEqual(t.routed, ['tools/call']);
  });

  it('asks with the tool, upstream and masked arguments; an accepted call is forwarded as asked and audited "accepted"', async () => {
    const s = stub({ confirm: RULE });
    assert.deepEqual(await run(s), { jsonrpc: '2.0', id: 1, result: { ok: true } });
    const [{ params, timeoutMs }] = s.asked as [Stub['asked'][number]];
    assert.equal(timeoutMs, 5000);
    const message = String(params.message);
    assert.match(message, /Deleting cannot be undone\./);
    assert.match(message, /Tool: "fs__delete_repo"\nUpstream: "up"/);
    assert.match(message, /"repo": "acme\/site"/);
    assert.match(message, /"token": "\[masked\]"/);
    assert.doesNotMatch(message, /hunter2/);
    assert.deepEqual(params.requestedSchema, { type: 'object', properties: { confirm: (params.requestedSchema as any).properties.confirm }, required: ['confirm'] });
    assert.equal((params.requestedSchema as any).properties.confirm.type, 'boolean');
    assert.deepEqual(s.routed, ['tools/call']);
    assert.deepEqual(s.confirmations, ['accepted']);
    assert.deepEqual(s.audit, [{ method: 'tools/call', outcome: 'ok', rule: 'tools.allow:*', upstream: 'up', confirmation: 'accepted' }]);
    assert.equal(s.host.inflight.size, 0);
  });

  const refusals: Array<[string, Record<string, unknown> | Error, string, string, number]> = [
    ['declined', { action: 'decline' }, 'declined', 'SWB_CONFIRMATION_DECLINED', ErrorCode.ServerError],
    ['accepted with the box unticked', { action: 'accept', content: { confirm: false } }, 'declined', 'SWB_CONFIRMATION_DECLINED', ErrorCode.ServerError],
    ['cancelled', { action: 'cancel' }, 'cancelled', 'SWB_CONFIRMATION_DECLINED', ErrorCode.ServerError],
    ['not answered in time', new JsonRpcError(ErrorCode.RequestTimeout, 'late'), 'timeout', 'SWB_CONFIRMATION_TIMEOUT', ErrorCode.RequestTimeout],
    ['answered with an error', new JsonRpcError(ErrorCode.MethodNotFound, 'no handler'), 'cancelled', 'SWB_CONFIRMATION_DECLINED', ErrorCode.ServerError],
  ];
  for (const [what, answer, outcome, code, rpc] of refusals) {
    it(`${what}: refused with ${code}, never routed, audited and counted "${outcome}"`, async () => {
      const s = stub({ confirm: RULE, elicit: async () => (answer instanceof Error ? Promise.reject(answer) : answer) });
      const r = await run(s);
      assert.equal(errorOf(r)?.code, rpc);
      assert.deepEqual(dataOf(r), { code, rule: 'fs__delete_*', tool: 'fs__delete_repo', outcome, upstream: 'up' });
      assert.match(errorOf(r)!.message, /nothing was sent to the upstream/);
      assert.deepEqual(s.routed, []);
      assert.deepEqual(s.confirmations, [outcome]);
      assert.deepEqual(s.audit, [{ method: 'tools/call', outcome: 'denied', rule: 'confirm:fs__delete_*', upstream: 'up', confirmation: outcome }]);
      assert.deepEqual({ ...s.done[0], seconds: 0 }, { method: 'tools/call', endpoint: '/mcp', upstream: 'none', outcome: 'denied', seconds: 0, tool: 'unknown', era: 'legacy' });
    });
  }

  it('a client without form elicitation is refused (never a silent bypass); ifUnsupported: allow lets the call through, counted', async () => {
    const s = stub({ confirm: RULE, elicits: false });
    const r = await run(s);
    assert.equal(errorOf(r)?.code, ErrorCode.InvalidRequest);
    assert.equal(dataOf(r).code, 'SWB_CONFIRMATION_UNSUPPORTED');
    assert.match(errorOf(r)!.message, /did not declare the elicitation capability/);
    assert.deepEqual([s.routed, s.asked.length, s.confirmations], [[], 0, ['unsupported']]);
    const allow = stub({ confirm: { ...RULE, ifUnsupported: 'allow' }, elicits: false });
    assert.deepEqual(await run(allow), { jsonrpc: '2.0', id: 1, result: { ok: true } });
    assert.deepEqual(allow.confirmations, ['unsupported']);
    assert.equal(allow.audit[0]!.confirmation, 'unsupported');
  });

  it('in the 2026-07-28 era an undeclared capability is -32021 with requiredCapabilities', async () => {
    const s = stub({ confirm: RULE, elicits: false });
    (s.host as { era: string }).era = 'modern';
    const r = await run(s);
    assert.equal(errorOf(r)?.code, -32021);
    assert.deepEqual(dataOf(r).requiredCapabilities, { elicitation: { form: {} } });
    assert.equal(dataOf(r).code, 'SWB_CONFIRMATION_UNSUPPORTED');
  });

  it('a call the client cancels while the user is asked gets no answer, and is audited as cancelled', async () => {
    const s = stub({ confirm: RULE, elicit: (_p, signal) => new Promise((_r, reject) => signal.onAbort(() => reject(new Error('cancelled')))) });
    const answer = run(s);
    await new Promise((r) => setImmediate(r));
    s.host.inflight.get(1)!.abort('client');
    assert.equal(await answer, undefined);
    assert.deepEqual(s.abandoned, [1]);
    assert.deepEqual(s.routed, []);
    assert.deepEqual(s.audit, [{ method: 'tools/call', outcome: 'cancelled', rule: 'confirm:fs__delete_*', upstream: 'up', confirmation: 'cancelled' }]);
    assert.equal(s.host.inflight.size, 0);
  });

  it('only tools/call is asked about', async () => {
    const s = stub({ confirm: RULE });
    await run(s, ctxOf(s, 'prompts/get', { name: 'fs__delete_repo' }));
    assert.equal(s.asked.length, 0);
  });
});
