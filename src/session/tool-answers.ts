import { toJsonRpcError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { JsonRpcResponse } from '../jsonrpc/types.js';
import type { Decision } from '../policy/decision.js';
import type { HiddenTextPolicy } from '../policy/hidden-text-policy.js';
import { CALL_TOOL, DEFAULT_LIMIT, MAX_LIMIT, SEARCH_TOOLS, longestAnswer, metaToolDefinitions, searchResult } from '../router/meta-tools.js';
import type { DefinitionScreen } from '../router/definition-screen.js';
import { mayShowOf } from '../router/shown-upstreams.js';
import type { ShownTools, ToolView, ViewTool } from '../router/tool-view.js';
import { countUnrouted, type PipelineHost, type RequestContext } from './request-pipeline.js';
import { searchAnswer } from './search-answer.js';
import { screenedAnswer } from './stages/hidden-text-stage.js';

type Result = Record<string, unknown>;

/** How a search is recorded in the audit log: allowed by no pattern, it only reveals what the caller may see. */
const SEARCH_DECISION: Decision = Object.freeze({ allowed: true, rule: 'tools.search' });
/** A call refused here, before policy saw a tool (a call_tool that names none): the meta-tool itself, allowed to all. */
const CALL_DECISION: Decision = Object.freeze({ allowed: true, rule: 'tools.call' });
const MAX_QUERY = 1000;

/** The tools of a view the caller may see: its tenant's policy on the canonical name, tool pinning, then hidden-text scanning. */
export async function visibleTools(host: PipelineHost, view: ToolView): Promise<ViewTool[]> {
  const admitted = await host.router!.admit(view, view.tools.filter((t) => host.guard.allowsTool(t.canonical)));
  const screen = host.endpoint.hiddenText.for(host.guard.tenant);
  return screen === undefined || screen.definitions === 'off' ? admitted : screened(host, screen, admitted);
}

/** Withheld tools left out; cleaned ones with their curated definition made from the clean copy. */
function screened(host: PipelineHost, screen: DefinitionScreen, tools: readonly ViewTool[]): ViewTool[] {
  const out: ViewTool[] = [];
  for (const t of tools) {
    const definition = shownAs(host, screen, t);
    if (definition !== undefined) out.push(definition === t.definition ? t : { ...t, definition });
  }
  return out;
}

/** A tool's curated definition as the screen shows it: its own, one made from the clean copy, or undefined (withheld). */
function shownAs(host: PipelineHost, screen: DefinitionScreen, t: ViewTool): Record<string, unknown> | undefined {
  const shown = screen.show('tool', t.upstream, t.raw);
  return shown === t.raw ? t.definition : shown && host.router!.curation.apply(shown, t.canonical, t.name);
}

/** Under strip, the tools as the caller is shown them, which a search must go by (not the hidden text it never sees). */
function shownTools(host: PipelineHost, screen: HiddenTextPolicy | undefined): ShownTools | undefined {
  if (screen?.definitions !== 'strip') return undefined;
  return { key: screen.key, show: (t) => shownAs(host, screen, t) };
}

/**
 * The tool view a search-mode answer (the meta-tools' descriptions, search_tools) is made of, failing as an
 * aggregated list does by the upstreams the caller may be shown a tool of alone (its tenant's policy and its
 * curation): a down upstream it may see nothing of neither fails the answer nor is named in it.
 */
function answerView(host: PipelineHost): Promise<ToolView> {
  const { tenant } = host.guard, router = host.router!, prefixes = host.endpoint.prefixNames;
  return router.toolView(undefined, true, (upstream) => mayShowOf(upstream, 'tools', prefixes, router.curation, tenant));
}

/** A request the gateway answers itself (meta-tools): metrics and, for a call, the audit line, as the observe stage would. */
export function answered(ctx: RequestContext, result: Result): JsonRpcResponse {
  const { req, host } = ctx;
  const call = req.method === 'tools/call';
  if (call) host.guard.record(req.method, req.params, SEARCH_DECISION, 'ok', ctx.startedAt, result, undefined);
  countUnrouted(ctx, 'ok', call ? String(req.params?.name) : undefined);
  return { jsonrpc: '2.0', id: req.id, result };
}

/**
 * A failed call's tool label: a meta-tool's name, else "unknown". A direct call that fails here was not
 * routed: whether the tool exists is not known, and the client chooses the name (of any length).
 */
function failedToolLabel(name: unknown): string {
  return name === SEARCH_TOOLS || name === CALL_TOOL ? name : 'unknown';
}

/** The same, for a refusal: the error the client gets, counted and (for a call) audited as one. */
export function failed(ctx: RequestContext, err: unknown): JsonRpcResponse {
  const { req, host } = ctx;
  const call = req.method === 'tools/call';
  // Answered before the observe stage: without this, the call would have no audit line at all.
  if (call) host.guard.record(req.method, req.params, req.params?.name === SEARCH_TOOLS ? SEARCH_DECISION : CALL_DECISION, 'error', ctx.startedAt, undefined, undefined);
  countUnrouted(ctx, 'error', call ? failedToolLabel(req.params?.name) : undefined);
  const response = toJsonRpcError(err, host.logger).toResponse(req.id);
  if (!call) return response;
  // A call's error may be an upstream's (search_tools fails with a tool list's): the model reads it as the outcome.
  ctx.error = err;
  return screenedAnswer(ctx, response)!;
}

/** tools/list of a search-mode endpoint: the meta-tools, described from what the caller may see, and its working set. */
export async function listMetaTools(ctx: RequestContext): Promise<JsonRpcResponse> {
  const { host, req } = ctx;
  // Never a cursor to continue: the list is one page.
  if (req.params?.cursor !== undefined) return failed(ctx, new JsonRpcError(ErrorCode.InvalidParams, 'Invalid params: unknown or malformed cursor'));
  try {
    const view = await answerView(host);
    const seen = await visibleTools(host, view);
    const cap = host.endpoint.tools.maxSearchAnswerChars;
    // Of what the caller may see, as its screen shows it (a strip can lengthen a text): each text's length known once per view.
    const reachable = longestAnswer(seen) > cap;
    const tools = metaToolDefinitions(seen, cap, reachable);
    const ws = host.endpoint.tools.exposure === 'search+working-set' ? host.workingSet : undefined;
    if (ws) for (const t of seen) if (ws.has(t)) tools.push(t.definition);
    return answered(ctx, { tools });
  } catch (err) {
    return failed(ctx, err);
  }
}

interface SearchArgs {
  query: string;
  limit: number;
  upstream: string | undefined;
}

function searchArgs(args: unknown): SearchArgs {
  const bad = (why: string) => new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: search_tools ${why}`);
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw bad('needs arguments {"query": "…"}');
  const { query, limit, upstream } = args as Record<string, unknown>;
  if (typeof query !== 'string' || query.trim() === '') throw bad('needs "query", a few words about the task');
  if (query.length > MAX_QUERY) throw bad(`"query" is longer than ${MAX_QUERY} characters`);
  if (limit !== undefined && (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_LIMIT)) throw bad(`"limit" must be an integer from 1 to ${MAX_LIMIT}`);
  if (upstream !== undefined && typeof upstream !== 'string') throw bad('"upstream" must be a string');
  return { query, limit: (limit as number | undefined) ?? DEFAULT_LIMIT, upstream };
}

/** What a search returns of a tool: enough to call it (also what the bench counts the tokens of). */
export function found(t: ViewTool): Result {
  return searchResult(t.name, t.definition);
}

/**
 * The best matches among the tools the caller may see. What it may see is decided first and ranked
 * alone: a tool it may not see neither appears nor steers the ranking (see ToolIndex.search).
 */
export async function rankedFor(host: PipelineHost, view: ToolView, a: SearchArgs): Promise<ViewTool[]> {
  // By canonical name: a screened tool comes back as a cleaned copy, which is what the caller is shown.
  const shown = new Map((await visibleTools(host, view)).map((t) => [t.canonical, t]));
  const admits = new Uint8Array(view.tools.length);
  view.tools.forEach((t, i) => {
    if (shown.has(t.canonical) && (a.upstream === undefined || t.upstream === a.upstream)) admits[i] = 1;
  });
  const ranked = await view.rank(a.query, host.guard.tenant.name, admits, shownTools(host, host.endpoint.hiddenText.for(host.guard.tenant)));
  return ranked.slice(0, a.limit).map((t) => shown.get(t.canonical)!);
}

/** search_tools: answered by the gateway from the endpoint's index, for this caller only. */
export async function searchTools(ctx: RequestContext): Promise<JsonRpcResponse> {
  const { host } = ctx;
  try {
    const a = searchArgs(ctx.req.params?.arguments);
    const best = await rankedFor(host, await answerView(host), a);
    const { tools, note, text } = searchAnswer(best.map(found), host.endpoint.tools.maxSearchAnswerChars);
    // What the answer names (a match left out for its size is not found).
    if (host.endpoint.tools.exposure === 'search+working-set') {
      const named = new Set(tools.map((t) => t.name));
      host.workingSet?.add(best.filter((t) => named.has(t.name)));
    }
    const shown = best.length > 0 ? text : `No tool matches "${a.query}". Try other words for the task, or fewer of them.`;
    return answered(ctx, { content: [{ type: 'text', text: shown }], structuredContent: note === undefined ? { tools } : { tools, note } });
  } catch (err) {
    return failed(ctx, err);
  }
}
