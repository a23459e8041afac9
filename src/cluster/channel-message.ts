import { isJsonObject } from '../jsonrpc/types.js';

/**
 * The JSON object a cluster channel carried, or undefined when the text is none: anything may be
 * published on a Redis channel (another version of the gateway, a stray client, a bug), and one bad
 * message must cost a counter, not the subscriber's process. Each channel checks its own fields after.
 */
export function parseChannelObject(text: string): Record<string, unknown> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isJsonObject(v) ? v : undefined;
}
