import { clipped } from '../observability/clipped.js';
import type { Logger } from '../observability/logger.js';

/**
 * The most tool names one upstream is warned about one by one. Beyond it the rest are left out as
 * before, said once for all of them: the names are the upstream's, as many as it lists.
 */
export const MAX_WARNED_NAMES = 1000;
/** The longest name a warning quotes (and remembers): MCP names are at most 128 characters. */
const MAX_NAME = 128;
/** Marks, in a set, that the one warning for the names beyond MAX_WARNED_NAMES was given (no cut name is empty). */
const BEYOND = '';

/** Per upstream (its pool), the cut names warned about: a warning per tool, not per client's tools/list. */
const warned = new WeakMap<object, Set<string>>();

/** Warns, once per tool of `owner`, that its prefixed name breaks the MCP name rule and it is left out. */
export function warnBadToolName(logger: Logger, owner: object, upstream: string, name: unknown): void {
  let names = warned.get(owner);
  if (!names) warned.set(owner, (names = new Set()));
  const tool = clipped(String(name), MAX_NAME);
  if (names.has(tool)) return;
  if (names.size < MAX_WARNED_NAMES) {
    names.add(tool);
    logger.warn({ upstream, tool }, 'tool left out: its prefixed name breaks the MCP name rule (only [A-Za-z0-9_.-])');
  } else if (!names.has(BEYOND)) {
    names.add(BEYOND);
    logger.warn({ upstream, limit: MAX_WARNED_NAMES }, 'more tools left out for names that break the MCP name rule than are warned about one by one: the rest are left out without a warning');
  }
}
