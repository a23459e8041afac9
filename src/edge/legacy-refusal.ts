import type { EdgeReply, EdgeRequest } from './edge-exchange.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { MODERN_PROTOCOL_VERSIONS } from '../jsonrpc/protocol-revisions.js';
import { isRequest, type JsonRpcMessage } from '../jsonrpc/types.js';
import { header } from './request-header.js';
import { sendError } from './replies.js';

/**
 * A 2025-era POST (no modern `_meta`) to an endpoint that serves only 2026-07-28, answered as a
 * modern-only server answers it (the official SDK's `legacy: 'reject'` does the same): a request, the
 * initialize handshake first of all, gets 400 -32022 naming the versions served, which the spec asks of
 * such a server (a legacy client has no fall-forward, so the error is all it can show its user) and which
 * tells a dual-era client it reached a modern server; a notification or a response is accepted and
 * dropped, as the era does with any; a batch, which the era does not have, is an invalid request.
 */
export function refuseLegacyPost(req: EdgeRequest, reply: EdgeReply, messages: readonly JsonRpcMessage[], batch: boolean): EdgeReply {
  if (batch) return sendError(reply, 400, 'Invalid Request: this endpoint serves only 2026-07-28, which has no batches', { code: ErrorCode.InvalidRequest });
  const m = messages[0]!;
  if (!isRequest(m)) return reply.code(202).send();
  const params = m.params as Record<string, unknown> | undefined;
  const named = m.method === 'initialize' ? params?.protocolVersion : header(req, 'mcp-protocol-version');
  const requested = typeof named === 'string' ? named : undefined;
  const supported = [...MODERN_PROTOCOL_VERSIONS];
  const message = `Unsupported protocol version: this endpoint serves only ${supported.join(', ')} (per-request _meta, no initialize and no session)`;
  // Through sendError, as every other refusal of the edge: counted (switchboard_http_refusals_total) and logged.
  return sendError(reply, 400, message, { code: ErrorCode.UnsupportedProtocolVersion, id: m.id, data: requested === undefined ? { supported } : { supported, requested } });
}
