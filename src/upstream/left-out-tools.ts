import { clipped } from '../observability/clipped.js';
import type { Logger } from '../observability/logger.js';

/**
 * The most tools (with their reasons) one connection remembers having warned about. Without a bound, an
 * upstream naming new such tools on every list grew the gateway's memory, and its log by a warning per
 * tool, for the connection's life. Beyond it the rest are left out as before, said once for all of them.
 */
export const MAX_WARNED_TOOLS = 1000;
/** Marks, in the set, that the one warning for the tools beyond MAX_WARNED_TOOLS was given (no tool name holds it). */
const BEYOND = '\n';
/** The longest tool name a warning quotes (and remembers): MCP names are at most 128 characters; the upstream's can be any length. */
const MAX_NAME = 128;

/**
 * The tools left out of an upstream's lists that were warned about, per upstream (its config): each of its
 * processes (one per session, with per-session sharing) lists the same tools, and warned about by each,
 * server-everything's task-only tool made a warning per session.
 */
const WARNED = new WeakMap<object, Set<string>>();

export function leftOutOf(config: object): Set<string> {
  let warned = WARNED.get(config);
  if (!warned) WARNED.set(config, (warned = new Set()));
  return warned;
}

/** Why a listed tool cannot be used through the gateway (the warning's message and reason), or undefined. */
export type LeftOutReason = (tool: Record<string, unknown>) => { message: string; reason: string } | undefined;

/**
 * A tool that can only be called as a task (2025-11-25 `execution.taskSupport: "required"`: called otherwise,
 * its server answers -32601). The gateway declares no tasks capability (it routes no tasks/*), and a client
 * must never make a call a task on a server without it: through the gateway such a tool cannot be called.
 */
export const taskOnly: LeftOutReason = (tool) => {
  const execution = tool.execution as { taskSupport?: unknown } | null | undefined;
  return execution?.taskSupport === 'required'
    ? { message: 'tool left out: it can only be called as a task, and the gateway offers no tasks', reason: 'execution.taskSupport is "required"' }
    : undefined;
};

/**
 * A tools/list without the tools `why` gives a reason for, each warned about once (by name and reason), not
 * on every list. The same result when none is left out.
 */
export function withoutTools(result: Record<string, unknown>, upstream: string, logger: Logger, warned: Set<string>, why: LeftOutReason): Record<string, unknown> {
  const tools = result.tools;
  if (!Array.isArray(tools)) return result;
  const kept = tools.filter((t: Record<string, unknown> | null) => {
    const out = t !== null && typeof t === 'object' ? why(t) : undefined;
    const tool = out && clipped(String(t!.name), MAX_NAME);
    const key = out && `${tool}\n${out.reason}`;
    if (key && !warned.has(key)) {
      if (warned.size < MAX_WARNED_TOOLS) {
        warned.add(key);
        logger.warn({ upstream, tool, reason: out.reason }, out.message);
      } else if (!warned.has(BEYOND)) {
        warned.add(BEYOND);
        logger.warn({ upstream, limit: MAX_WARNED_TOOLS }, 'more tools left out of upstream lists than are warned about one by one: the rest are left out without a warning');
      }
    }
    return out === undefined;
  });
  return kept.length === tools.length ? result : { ...result, tools: kept };
}
