import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { Exchange } from './exchange.js';
import { decodeHeaderValue } from '../jsonrpc/header-value.js';
import { cachedParamHeaderPaths, valueAt } from '../jsonrpc/param-headers.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';

/**
 * A number as a header may write it: a JSON number literal, nothing else. Number() also reads hex,
 * binary, a leading + and Infinity ("0x2A", "+42" would equal 42), and an intermediary that routes on
 * the header could read those differently from the server that reads the body.
 */
const DECIMAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/**
 * A body value as its header carries it (numbers compared as numbers, "42.0" = 42; booleans in lower case).
 * An object or array is no value a header mirrors: String() of one threw (`{"toString": 1}`, an internal
 * error) or read `["a"]` as "a".
 */
function matches(header: string, body: unknown): boolean {
  if (typeof body === 'number') return DECIMAL.test(header) && Number(header) === body;
  return (typeof body === 'string' || typeof body === 'boolean') && header === String(body);
}

/**
 * The check of a 2026-07-28 tools/call's `Mcp-Param-*` headers against the tool's definition: every
 * annotated argument present in the body must come with its header, equal after decoding; a header
 * for an argument that is absent is ignored, like any header the tool does not annotate.
 */
export function paramHeaderCheck(headers: Readonly<Record<string, string | string[] | undefined>>, args: unknown): (definition: Record<string, unknown>) => void {
  return (definition) => {
    for (const [header, path] of cachedParamHeaderPaths(definition.inputSchema)) {
      const body = valueAt(args, path);
      if (body === undefined || body === null) continue;
      const given = headers[header];
      // A repeated header: its first value (as the value the client meant; Node joins most repeats itself).
      const raw = Array.isArray(given) ? given[0] : given;
      if (raw === undefined) throw new JsonRpcError(ErrorCode.HeaderMismatch, `Header mismatch: the ${header} header is required (argument ${path.join('.')} is in the body)`);
      const value = decodeHeaderValue(raw);
      if (value === undefined) throw new JsonRpcError(ErrorCode.HeaderMismatch, `Header mismatch: the ${header} header is malformed`);
      if (!matches(value, body)) throw new JsonRpcError(ErrorCode.HeaderMismatch, `Header mismatch: ${header} header value does not match argument ${path.join('.')}`);
    }
  };
}

/**
 * The check a modern tools/call's route makes, against the headers of the attempt now waiting: a retry
 * is a POST of its own, whose headers must match the body as the first POST's did (a confirmation
 * round's retry reaches the route itself). The definition is kept for the retries of later rounds,
 * which are checked before they continue the call (ModernService).
 */
export function attemptHeaderCheck(exchange: Exchange): (definition: Record<string, unknown>) => void {
  return (definition) => {
    exchange.toolDefinition = definition;
    paramHeaderCheck((exchange.current ?? exchange.first).paramHeaders, exchange.first.params.arguments)(definition);
  };
}
