import { invalidParamHeaders } from '../jsonrpc/param-headers.js';
import type { Logger } from '../observability/logger.js';

/**
 * A modern upstream's tools/list without the tools whose x-mcp-header annotations break the era's rules:
 * a client of it must leave them out (their arguments cannot be mirrored into headers), and says so.
 */
export function withValidHeaderAnnotations(result: Record<string, unknown>, upstream: string, logger: Logger, warned: Set<string>): Record<string, unknown> {
  const tools = result.tools;
  if (!Array.isArray(tools)) return result;
  const kept = tools.filter((t: Record<string, unknown> | null) => {
    const why = t !== null && typeof t === 'object' ? invalidParamHeaders(t.inputSchema) : undefined;
    // Said once per tool and reason, not on every list.
    if (why && !warned.has(`${String(t!.name)}\n${why}`)) {
      warned.add(`${String(t!.name)}\n${why}`);
      logger.warn({ upstream, tool: String(t!.name), reason: why }, 'tool left out: its x-mcp-header annotations are invalid');
    }
    return why === undefined;
  });
  return kept.length === tools.length ? result : { ...result, tools: kept };
}
