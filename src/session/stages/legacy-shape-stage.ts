import { ErrorCode } from '../../jsonrpc/error-codes.js';
import { methodSpec } from '../../jsonrpc/methods.js';
import { isJsonObject as isObject, type JsonRpcResponse } from '../../jsonrpc/types.js';
import type { Stage } from '../request-pipeline.js';

type Result = Record<string, unknown>;

/** An output schema a 2025 revision can hold: an object schema (`type: "object"`), as 2025-06-18 and 2025-11-25 define it. */
function legacyOutputSchema(schema: unknown): boolean {
  return isObject(schema) && schema.type === 'object';
}

/** A tools/list result whose tools all have outputs a 2025 client can hold (the same object when nothing changes). */
function legacyToolList(result: Result): Result {
  const tools = result.tools;
  if (!Array.isArray(tools) || tools.every((t) => !isObject(t) || t.outputSchema === undefined || legacyOutputSchema(t.outputSchema))) return result;
  return {
    ...result,
    tools: tools.map((t) => {
      if (!isObject(t) || t.outputSchema === undefined || legacyOutputSchema(t.outputSchema)) return t;
      const { outputSchema: _dropped, ...rest } = t;
      return rest;
    }),
  };
}

/** A tools/call result whose structured content a 2025 client can hold: an object, else only its text form in content. */
function legacyToolResult(result: Result): Result {
  const structured = result.structuredContent;
  if (structured === undefined || isObject(structured)) return result;
  const { structuredContent: _dropped, ...rest } = result;
  // The era asks a tool to give the serialised form as text too; one that did not is given it here.
  const content = Array.isArray(rest.content) ? rest.content : [];
  return content.length > 0 ? rest : { ...rest, content: [{ type: 'text', text: JSON.stringify(structured) }] };
}

/** -32042 (URLElicitationRequired) came with URL-mode elicitation, in the revisions that have notifications/elicitation/complete. */
const URL_ELICITATION: readonly string[] = methodSpec('notifications/elicitation/complete')!.revisions;

/**
 * A -32042 as a revision without URL elicitation (2025-06-18 and older) can read it: -32000 (the gateway's
 * failure code, which every client shows) whose message names each URL to open and what for, since such a
 * client reads no `data` of it; `data` is kept. Any other response is returned as it is.
 */
function withReadableUrls(response: JsonRpcResponse): JsonRpcResponse {
  if (!('error' in response) || response.error.code !== ErrorCode.UrlElicitationRequired) return response;
  const list = isObject(response.error.data) ? response.error.data.elicitations : undefined;
  const urls = (Array.isArray(list) ? list : [])
    .filter((e): e is Record<string, unknown> => isObject(e) && typeof e.url === 'string')
    // Its own message is not said twice (the gateway's consent error has the same in both).
    .map((e) => (typeof e.message === 'string' && e.message !== '' && e.message !== response.error.message ? `${e.url} (${e.message})` : String(e.url)));
  const told = urls.length === 0 ? '' : ` Open ${urls.join(', then ')} in a browser, then try again.`;
  return { ...response, error: { ...response.error, code: ErrorCode.ServerError, message: `${response.error.message}${told}` } };
}

/**
 * A 2025 session's tools as its revision defines them. A 2026-07-28 upstream may declare any JSON Schema as a
 * tool's outputSchema and answer any JSON value as structuredContent; 2025-06-18 and 2025-11-25 require both
 * to be objects, and the official SDK 1.x refused a whole tools/list (every tool of the endpoint) for one tool
 * whose outputSchema was an array schema, and the result of its call. Such a tool is shown to a 2025 client
 * without its outputSchema, and its call's result without structuredContent (its text form stays in content).
 * A 2026-07-28 client is shown both as the upstream gave them (this stage is not in its pipeline).
 * A session whose revision predates URL elicitation gets any request's -32042 as withReadableUrls says.
 */
export const legacyShapeStage: Stage = (ctx, next) => {
  const method = ctx.req.method;
  const version = ctx.host.session?.protocolVersion;
  const urlsInMessage = version !== undefined && !URL_ELICITATION.includes(version);
  // Every other method passes straight through (no promise of its own), on a session that knows -32042.
  if (method !== 'tools/list' && method !== 'tools/call') return urlsInMessage ? next(ctx).then((r) => r && withReadableUrls(r)) : next(ctx);
  const shape = method === 'tools/list' ? legacyToolList : legacyToolResult;
  return next(ctx).then((response) => {
    if (response === undefined) return response;
    if (!('result' in response)) return urlsInMessage ? withReadableUrls(response) : response;
    const result = shape(response.result);
    return result === response.result ? response : ({ ...response, result } as JsonRpcResponse);
  });
};
