import { GatewayError, toJsonRpcError } from '../errors.js';
import { invalidClientAnswer } from '../jsonrpc/client-answer.js';
import { capabilityName, missingClientCapability } from '../jsonrpc/client-capabilities.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { clientCapabilityNeeds } from '../jsonrpc/methods.js';
import type { JsonRpcResponse } from '../jsonrpc/types.js';
import { INPUT_KEY_HINT } from '../jsonrpc/modern-meta.js';

// What a 2025 upstream's questions to its client (elicitation, sampling, roots) and its -32042 look like
// as a 2026-07-28 exchange's input requests.

export { INPUT_KEY_HINT };

/** A 2025 server→client request's params as a modern client is shown them: no hint, no 2025 elicitationId (gone in 2026-07-28). */
export function clientParams(params: Record<string, unknown> | undefined): Record<string, unknown> {
  const { elicitationId: _id, ...out } = params ?? {};
  const meta = out._meta as Record<string, unknown> | undefined;
  if (!meta || !(INPUT_KEY_HINT in meta)) return out;
  const { [INPUT_KEY_HINT]: _hint, ...kept } = meta;
  const { _meta: _old, ...rest } = out;
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
}

/** The URL elicitations of a -32042 (URLElicitationRequired) answer, if it is one. */
export function urlElicitations(response: JsonRpcResponse): Array<Record<string, unknown>> | undefined {
  if (!('error' in response) || response.error.code !== ErrorCode.UrlElicitationRequired) return undefined;
  const list = (response.error.data as { elicitations?: unknown } | undefined)?.elicitations;
  return Array.isArray(list) && list.length > 0 ? list.filter((e): e is Record<string, unknown> => e !== null && typeof e === 'object') : undefined;
}

/** The answer to a call whose upstream needs URLs visited that the user declined (or cancelled) to open. */
export function urlRefusal(outcome: string, method: string): JsonRpcResponse {
  const err = new GatewayError('SWB_URL_ELICITATION_DECLINED', `The user ${outcome === 'cancelled' ? 'cancelled opening' : 'declined to open'} the URL the upstream needs visited first; the ${method} was not made again`, { outcome });
  return toJsonRpcError(err).toResponse(0);
}

/** The requests an input round may carry: those a client capability answers (elicitation, sampling, roots). */
const INPUT_METHODS: Readonly<Record<string, string>> = clientCapabilityNeeds();

/**
 * -32601 for a server→client request no input round may carry (a 2025-11-25 client's tasks/*, anything
 * else): the spec allows elicitation/create, sampling/createMessage and roots/list alone, and a client
 * refuses a whole InputRequiredResult that names another. Refused as a client that lacks the method would.
 */
export function notAnInputRequest(method: string): JsonRpcError | undefined {
  if (Object.hasOwn(INPUT_METHODS, method)) return undefined;
  return new JsonRpcError(ErrorCode.MethodNotFound, `Method not found: "${method}" cannot be put to a 2026-07-28 client (an input round carries only ${Object.keys(INPUT_METHODS).join(', ')})`);
}

/** -32021 (MissingRequiredClientCapability) when a request declaring `capabilities` cannot be asked `method`. */
export function capabilityRefusal(capabilities: Record<string, any>, method: string, params: Record<string, unknown> | undefined): JsonRpcError | undefined {
  const missing = missingClientCapability(capabilities, method, params);
  if (!missing) return undefined;
  return new JsonRpcError(ErrorCode.MissingRequiredClientCapability, `Missing required client capability: "${method}" needs ${capabilityName(missing)}`, { requiredCapabilities: missing });
}

/**
 * -32602 for the first answer a retry brings that breaks the schema of the question it answers (an object:
 * anything else is no answer, and the question is asked again). The client's invalid input, refused as the
 * spec's MRTR error handling and a 2026-07-28 upstream's round (checkedAnswer) refuse it; before 2026-12-07 a
 * 2025 upstream was sent an error in its place, and the client got whatever the upstream made of it.
 */
export function invalidAnswer(asked: Record<string, { method: string; params: Record<string, unknown> }>, answers: Record<string, unknown>): JsonRpcError | undefined {
  for (const [key, ask] of Object.entries(asked)) {
    const answer = Object.hasOwn(answers, key) ? answers[key] : undefined;
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) continue;
    const bad = invalidKeyedAnswer(key, ask.method, ask.params, answer as Record<string, unknown>);
    if (bad) return bad;
  }
  return undefined;
}

function invalidKeyedAnswer(key: string, method: string, params: Record<string, unknown> | undefined, answer: Record<string, unknown>): JsonRpcError | undefined {
  const bad = invalidClientAnswer(method, answer, params);
  return bad && new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: inputResponses["${key}"]: ${bad.message}`, { key });
}

/**
 * An answer a request brought before its question was asked (a first call's inputResponses, a retry's keys
 * for questions still to come), now taken by that question: held to its schema as an answer to a question
 * already out is (invalidAnswer). Before 2026-12-07 it was not: the 2025 upstream's question was answered
 * with an error in its place (-32603) and the client got whatever the upstream made of that (a tool result
 * with isError) rather than -32602. An invalid one ends the call (`abandon`), its question refused as an
 * ended call's are, never sent the client's invalid answer.
 */
export function takenAnswer(key: string, method: string, params: Record<string, unknown> | undefined, answer: Record<string, unknown>, abandon: (err: JsonRpcError) => void): Promise<Record<string, unknown>> {
  const invalid = invalidKeyedAnswer(key, method, params, answer);
  if (!invalid) return Promise.resolve(answer);
  abandon(invalid);
  return Promise.reject(new JsonRpcError(ErrorCode.InternalError, `the client request ended (${invalid.message})`));
}
