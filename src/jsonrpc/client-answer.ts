import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';
import { elicitContentProblem } from './elicit-schema.js';
import { isJsonObject as isObject } from './types.js';

type Result = Record<string, unknown>;

/** An elicitation's content: each value a string, number, boolean or list of strings (the schema's primitives). */
function isElicitContent(v: unknown): boolean {
  if (!isObject(v)) return false;
  for (const k in v) {
    const x = v[k];
    if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') continue;
    if (!Array.isArray(x) || !x.every((s) => typeof s === 'string')) return false;
  }
  return true;
}

/** What is wrong with a client's result for a server→client request, by the schema of its method; undefined when nothing is. */
function problem(method: string, r: Result, params: Record<string, unknown> | undefined): string | undefined {
  switch (method) {
    case 'elicitation/create':
      if (r.action !== 'accept' && r.action !== 'decline' && r.action !== 'cancel') return '"action" is not accept, decline or cancel';
      if (r.content !== undefined && !isElicitContent(r.content)) return '"content" is not an object of strings, numbers, booleans and lists of strings';
      // An accepted form answers the question's schema (a URL-mode one has none).
      return r.action === 'accept' && params?.mode !== 'url' ? elicitContentProblem(params?.requestedSchema, (r.content ?? {}) as Result) : undefined;
    case 'sampling/createMessage':
      if (r.role !== 'user' && r.role !== 'assistant') return '"role" is not user or assistant';
      if (typeof r.model !== 'string') return '"model" is not a string';
      // One content block, or (2025-11-25, with tools) a list of them.
      return isObject(r.content) || (Array.isArray(r.content) && r.content.every(isObject)) ? undefined : '"content" is not a content block';
    case 'roots/list':
      return Array.isArray(r.roots) && r.roots.every((root) => isObject(root) && typeof root.uri === 'string') ? undefined : '"roots" is not a list of roots with a string "uri"';
    default:
      return undefined;
  }
}

/**
 * The error an upstream is answered instead of a client's result that breaks the schema of the request it
 * answers (an elicitation's `"action": 5`, a sampling result without a model; given the request's `params`, an
 * accepted form's content its requestedSchema does not allow), or undefined to relay it.
 * Relayed, such a result reached the server that asked, which trusts the schema: a shared process met one
 * client's garbage. The upstream learns its request failed, as when a client answers an error.
 */
export function invalidClientAnswer(method: string, result: Result, params?: Record<string, unknown>): JsonRpcError | undefined {
  const why = problem(method, result, params);
  return why === undefined ? undefined : new JsonRpcError(ErrorCode.InternalError, `the client's answer to "${method}" is invalid: ${why}`);
}
