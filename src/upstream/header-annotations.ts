import { invalidParamHeaders } from '../jsonrpc/param-headers.js';
import type { Logger } from '../observability/logger.js';

/**
 * The most tools (with their reasons) one connection remembers having warned about. Without a bound, an
 * upstream naming new such tools on every list grew the gateway's memory, and its log by a warning per
 * tool, for the connection's life. Beyond it the rest are left out as before, said once for all of them.
 */
export const MAX_WARNED_TOOLS = 1000;
/** Marks, in the set, that the one warning for the tools beyond MAX_WARNED_TOOLS was given (no tool name holds it). */
const BEYOND = '\n';

/**
 * A modern upstream's tools/list without the tools whose x-mcp-header annotations break the era's rules:
 * a client of it must leave them out (their arguments cannot be mirrored into headers), and says so.
 */
export function withValidHeaderAnnotations(result: Record<string, unknown>, upstream: string, logger: Logger, warned: Set<string>): Record<string, unknown> {
  const tools = result.tools;
  if (!Array.isArray(tools)) return result;
  const kept = tools.filter((t: Record<string, unknown> | null) => {
    const why = t !== null && typeof t === 'object' ? invalidParamHeaders(t.inputSchema) : undefined;
    const key = why && `${String(t!.name)}\n${why}`;
    // Said once per tool and reason, not on every list.
    if (key && !warned.has(key)) {
      if (warned.size < MAX_WARNED_TOOLS) {
        warned.add(key);
        logger.warn({ upstream, tool: String(t!.name), reason: why }, 'tool left out: its x-mcp-header annotations are invalid');
      } else if (!warned.has(BEYOND)) {
        warned.add(BEYOND);
        logger.warn({ upstream, limit: MAX_WARNED_TOOLS }, 'more tools left out for invalid x-mcp-header annotations than are warned about one by one: the rest are left out without a warning');
      }
    }
    return why === undefined;
  });
  return kept.length === tools.length ? result : { ...result, tools: kept };
}
