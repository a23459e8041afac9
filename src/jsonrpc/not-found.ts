import { ErrorCode } from './error-codes.js';
import { JsonRpcError } from './json-rpc-error.js';
import type { AbsentKind } from './methods.js';

/**
 * The wire error for a name the caller may not reach. It says what kind of name it was as a typed
 * field (metrics read it, never the message text); on the wire it is an ordinary JSON-RPC error.
 */
export class NotFoundError extends JsonRpcError {
  readonly absent: AbsentKind;
  /** Set when the name exists but the gateway withholds it (e.g. hidden text): the audit's rule, never sent. */
  rule: string | undefined;

  constructor(absent: AbsentKind, code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.absent = absent;
  }
}

/**
 * The one answer for a name the caller may not reach, whether it does not exist or policy hides it:
 * identical in both cases, so a denied tool's existence never leaks.
 */
export function notFound(kind: AbsentKind, name: string): NotFoundError {
  if (kind === 'resource') return new NotFoundError(kind, ErrorCode.ResourceNotFound, `Resource ${name} not found`, { uri: name });
  if (kind === 'template') return new NotFoundError(kind, ErrorCode.InvalidParams, `Resource template ${name} not found`);
  return new NotFoundError(kind, ErrorCode.InvalidParams, `${kind === 'tool' ? 'Tool' : 'Prompt'} ${name} not found`);
}

/** The same answer for a name the gateway withholds by `rule`: the client sees "not found", the audit the rule. */
export function withheld(kind: AbsentKind, name: string, rule: string): NotFoundError {
  const err = notFound(kind, name);
  err.rule = rule;
  return err;
}
