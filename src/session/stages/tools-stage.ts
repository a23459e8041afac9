import { ErrorCode } from '../../jsonrpc/error-codes.js';
import { JsonRpcError } from '../../jsonrpc/json-rpc-error.js';
import { notFound } from '../../jsonrpc/not-found.js';
import { isJsonObject, type JsonRpcResponse } from '../../jsonrpc/types.js';
import { ATTR, mcpSpanName, requestAttributes } from '../../observability/trace-attributes.js';
import { CALL_TOOL, SEARCH_TOOLS } from '../../router/meta-tools.js';
import type { ViewTool } from '../../router/tool-view.js';
import type { Next, RequestContext, Stage } from '../request-pipeline.js';
import { failed, listMetaTools, searchTools } from '../tool-answers.js';

type Params = Record<string, unknown>;

/** call_tool's arguments as the direct call they stand for (the request's _meta kept: its progress token). */
function unwrapCallTool(params: Params): Params {
  const args = params.arguments;
  if (!isJsonObject(args) || typeof args.name !== 'string') {
    throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: ${CALL_TOOL} needs "name" (a tool name ${SEARCH_TOOLS} returned) and "arguments" (an object)`);
  }
  if (args.arguments !== undefined && !isJsonObject(args.arguments)) throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: ${CALL_TOOL} "arguments" must be an object`);
  return { ...params, name: args.name, arguments: args.arguments ?? {} };
}

/**
 * The tool an exposed name names; null when the view could not be made (an upstream with no instance to
 * ask: down, restarting). Such a call still goes through policy, argument rules, audit and metrics, by the
 * canonical name its rename gives (else as sent), and fails at the route as any call to that upstream does.
 */
function lookUp(ctx: RequestContext, name: string): Promise<ViewTool | undefined | null> {
  return ctx.host.router!.toolView(name).then(
    (view) => view.named(name),
    () => null,
  );
}

/**
 * A tools/call by an exposed name goes on as a call by the canonical name, the one policy, argument
 * rules, audit, metrics and routing know; call_tool goes on as the direct call it wraps, through the
 * same stages. A name the view does not expose goes on as sent, with a definition check that answers
 * "not found" if the router does find it (a canonical name curation hid, renamed or shortened): the
 * client gets exactly what an unknown tool gets.
 */
async function routeCall(ctx: RequestContext, next: Next): Promise<JsonRpcResponse | undefined> {
  const { req, host } = ctx;
  const search = host.endpoint.tools.searchMode;
  let params = req.params ?? {};
  if (search && params.name === SEARCH_TOOLS) return searchTools(ctx);
  const wrapped = search && params.name === CALL_TOOL;
  if (wrapped) {
    try {
      params = unwrapCallTool(params);
    } catch (err) {
      return failed(ctx, err);
    }
  }
  const name = params.name;
  if (typeof name !== 'string') return next(ctx);
  // Traced as the call it runs ("tools/call searchCode"), not as "tools/call call_tool".
  if (wrapped && ctx.span) {
    ctx.span.rename(mcpSpanName('tools/call', params));
    // The name cut as a direct call's is (requestAttributes): the SDK's cut would keep the whole of it alive.
    ctx.span.set({ ...requestAttributes('tools/call', params), [ATTR.metaTool]: CALL_TOOL });
  }
  const meta = search && (name === SEARCH_TOOLS || name === CALL_TOOL);
  const tool = meta ? undefined : await lookUp(ctx, name);
  const hidden = () => {
    throw notFound('tool', name);
  };
  // A call_tool's own Mcp-Param-* headers were for call_tool, whose schema asks for none.
  const check = tool ? (wrapped ? undefined : ctx.checkDefinition) : hidden;
  const canonical = tool === null ? (host.router!.curation.canonicalOf(name) ?? name) : (tool?.canonical ?? name);
  const routed: RequestContext = { ...ctx, req: { ...req, params: { ...params, name: canonical } }, exposedName: name, checkDefinition: check };
  const response = await next(routed);
  // The stages after this one fill in `routed`, not `ctx`; the trace stage around this one reads the policy
  // decision from `ctx` (a refusal's policy.denied event), which every call routed here lacked before.
  ctx.decision = routed.decision;
  return response;
}

/** A listed tool under its exposed name and curated texts; hidden ones left out. */
async function exposeList(ctx: RequestContext, response: JsonRpcResponse | undefined): Promise<JsonRpcResponse | undefined> {
  const listed = response && 'result' in response ? (response.result.tools as Array<Params> | undefined) : undefined;
  if (!Array.isArray(listed)) return response;
  const router = ctx.host.router!;
  const max = ctx.host.endpoint.tools.maxNameLength;
  if (router.curation.empty && listed.every((t) => String(t.name).length <= max)) return response;
  const view = await router.toolView();
  const tools: Params[] = [];
  for (const t of listed) {
    const name = view.exposedName(String(t.name));
    if (name !== undefined) tools.push(router.curation.apply(t, String(t.name), name));
  }
  return { ...response!, result: { ...(response as { result: Params }).result, tools } } as JsonRpcResponse;
}

/**
 * What clients see of the tools: curated names and texts, names that fit maxToolNameLength, and on a
 * search-mode endpoint the meta-tools search_tools and call_tool. Before policy, because policy (and
 * everything after it) knows tools by their canonical names. The common case (no curation, a name that
 * fits, every tool listed) passes with a property read and a length check.
 */
export const toolsStage: Stage = (ctx, next) => {
  const { req, host } = ctx;
  if (req.method === 'tools/call') {
    const tools = host.endpoint.tools;
    const name = req.params?.name;
    if (!tools.searchMode && host.router!.curation.empty && (typeof name !== 'string' || name.length < tools.maxNameLength)) return next(ctx);
    return routeCall(ctx, next).catch((err: unknown) => failed(ctx, err));
  }
  if (req.method === 'tools/list') {
    if (host.endpoint.tools.searchMode) return listMetaTools(ctx);
    return next(ctx).then((response) => exposeList(ctx, response));
  }
  return next(ctx);
};
