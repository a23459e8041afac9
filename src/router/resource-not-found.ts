import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { notFound, type NotFoundError } from '../jsonrpc/not-found.js';

/**
 * An upstream's answer that the resource it was asked to read does not exist, as the gateway's own
 * answer for a URI the caller may not reach: a URI policy denies and an allowed one no upstream serves
 * must not be told apart, and the gateway cannot know the second without asking (a template may serve
 * it). Recognised: MCP's -32002, and the -32602 "Resource <uri> not found" the official SDK's server
 * answers (its wire message is the only sign of it). Any other error is passed on as it is.
 */
export function resourceNotFound(err: unknown, uri: string): NotFoundError | undefined {
  if (!(err instanceof JsonRpcError)) return undefined;
  const sdk = err.code === ErrorCode.InvalidParams && err.message.includes(`Resource ${uri} not found`);
  return err.code === ErrorCode.ResourceNotFound || sdk ? notFound('resource', uri) : undefined;
}
