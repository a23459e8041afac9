import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { notFound, type NotFoundError } from '../jsonrpc/not-found.js';

/**
 * An upstream's answer that the resource it was asked to read does not exist, as the gateway's own
 * answer for a URI the caller may not reach: a URI policy denies and an allowed one no upstream serves
 * must not be told apart, and the gateway cannot know the second without asking (a template may serve
 * it). Recognised: MCP's -32002; the -32602 "Resource <uri> not found" the official SDK 1.x server
 * answers (its wire message is the only sign of it); and the 2026-07-28 form, -32602 whose data is the
 * URI alone (`{uri}`: "Resource not found: <uri>" from the SDK v2 server), which any other invalid-params
 * error is not. Any other error is passed on as it is.
 */
export function resourceNotFound(err: unknown, uri: string): NotFoundError | undefined {
  if (!(err instanceof JsonRpcError)) return undefined;
  if (err.code === ErrorCode.ResourceNotFound) return notFound('resource', uri);
  if (err.code !== ErrorCode.InvalidParams) return undefined;
  return err.message.includes(`Resource ${uri} not found`) || onlyUri(err.data, uri) ? notFound('resource', uri) : undefined;
}

function onlyUri(data: unknown, uri: string): boolean {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return false;
  const keys = Object.keys(data);
  return keys.length === 1 && (data as { uri?: unknown }).uri === uri;
}
