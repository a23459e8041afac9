import { GatewayError } from '../errors.js';
import { nestsDeeper } from '../jsonrpc/parse.js';
import type { JsonRpcMessage, RequestId } from '../jsonrpc/types.js';

/**
 * How deep an upstream's message may nest arrays and objects: as deep as a client's may at most
 * (server.maxJsonDepth ≤ 1000). Deeper, the gateway's JSON.stringify of the answer ran out of stack (from
 * some 4000 levels): the call was audited "ok" and its client never answered.
 */
export const UPSTREAM_MAX_DEPTH = 1000;

/**
 * An upstream's message nested past UPSTREAM_MAX_DEPTH: never relayed. When it answers a call, that call
 * fails with the error given here (`id`); other messages are dropped. Undefined: the message is fine.
 */
export function tooDeep(text: string, message: JsonRpcMessage): { id: RequestId | undefined; error: GatewayError } | undefined {
  if (!nestsDeeper(text, message, UPSTREAM_MAX_DEPTH)) return undefined;
  const id = 'method' in message || message.id === null ? undefined : message.id;
  const error = new GatewayError('SWB_UPSTREAM_PROTOCOL', `the upstream answered with a message nesting arrays and objects deeper than ${UPSTREAM_MAX_DEPTH} levels; the gateway does not relay it`);
  return { id, error };
}

/**
 * A remote link's messages (a JSON body's, an SSE event's) with those nested past UPSTREAM_MAX_DEPTH taken
 * out, `lost` told of each (the request it answers, if any, and the error that request fails with): it may
 * throw, so that the read fails. The messages themselves when none is (nearly every time: a bracket count).
 */
export function withoutDeep(text: string, messages: JsonRpcMessage[], lost: (id: RequestId | undefined, error: GatewayError) => void): JsonRpcMessage[] {
  // The common case allocates nothing: the messages as they came.
  if (messages.every((m) => tooDeep(text, m) === undefined)) return messages;
  return messages.filter((m) => {
    const deep = tooDeep(text, m);
    if (deep) lost(deep.id, deep.error);
    return deep === undefined;
  });
}
