import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';

/**
 * The one answer for a name the caller may not reach, whether it does not exist or policy hides it:
 * identical in both cases, so a denied tool's existence never leaks.
 */
export function notFound(kind: 'tool' | 'prompt' | 'resource' | 'template', name: string): JsonRpcError {
  if (kind === 'resource') return new JsonRpcError(ErrorCode.ResourceNotFound, `Resource ${name} not found`, { uri: name });
  if (kind === 'template') return new JsonRpcError(ErrorCode.InvalidParams, `Resource template ${name} not found`);
  return new JsonRpcError(ErrorCode.InvalidParams, `${kind === 'tool' ? 'Tool' : 'Prompt'} ${name} not found`);
}
