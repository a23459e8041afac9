import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';
import { LOG_LEVELS } from './modern-meta.js';
import { isProgressToken } from './progress-token.js';
import { isJsonObject as isObject } from './types.js';

type Params = Record<string, unknown> | undefined;

/** An object whose every value is a string (prompt arguments, a completion's context arguments). */
function isStringMap(v: unknown): boolean {
  if (!isObject(v)) return false;
  for (const k in v) if (typeof v[k] !== 'string') return false;
  return true;
}

/** What is wrong with the members of `params` the spec gives a shape, per method; undefined when nothing is. */
function problem(method: string, params: Params): string | undefined {
  if (params?._meta !== undefined && !isObject(params._meta)) return '"_meta" must be an object';
  if (params?._meta !== undefined && 'progressToken' in params._meta && !isProgressToken(params._meta.progressToken)) return '"_meta.progressToken" must be a string or an integer';
  switch (method) {
    case 'tools/call':
      if (params?.arguments !== undefined && !isObject(params.arguments)) return '"arguments" must be an object';
      if (params?.task !== undefined && !isObject(params.task)) return '"task" must be an object';
      return undefined;
    case 'prompts/get':
      return params?.arguments === undefined || isStringMap(params.arguments) ? undefined : '"arguments" must be an object of strings';
    case 'resources/unsubscribe':
      return typeof params?.uri === 'string' ? undefined : '"uri" must be a string';
    case 'completion/complete': {
      // A ref whose name or uri is no string: String() of the client's `{"toString": 1}` threw (-32603).
      const ref = params?.ref;
      if (isObject(ref) && ((ref.type === 'ref/prompt' && typeof ref.name !== 'string') || (ref.type === 'ref/resource' && typeof ref.uri !== 'string'))) return '"ref" must have a string "name" (ref/prompt) or "uri" (ref/resource)';
      const arg = params?.argument;
      if (!isObject(arg) || typeof arg.name !== 'string' || typeof arg.value !== 'string') return '"argument" must be an object with a string "name" and "value"';
      const context = params?.context;
      if (context !== undefined && (!isObject(context) || (context.arguments !== undefined && !isStringMap(context.arguments)))) return '"context" must be an object whose "arguments" are strings';
      return undefined;
    }
    case 'logging/setLevel':
      return LOG_LEVELS.includes(params?.level as string) ? undefined : `"level" must be one of ${LOG_LEVELS.join(', ')}`;
    default:
      return undefined;
  }
}

/**
 * Refuses (-32602) a client request whose params break the shape MCP's schema gives them, before it is
 * routed: such a request was forwarded as it came, so one client's `"arguments": "x"` or `"_meta": "x"`
 * reached a shared upstream, where a server that trusts the schema throws (and a fragile one dies with
 * every other session's calls in flight), and a setLevel's `"level": 5` was kept for the session and
 * sent with each of its requests. Only what the schema defines is checked; extra members pass.
 */
export function checkParamsShape(method: string, params: Params): void {
  const why = problem(method, params);
  if (why !== undefined) throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: ${why}`);
}
