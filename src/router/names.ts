// The names rule lives with the method table (src/jsonrpc/names.ts): policy needs the delimiter too.
export { DELIMITER, prefixed, splitPrefixed, isValidToolName, hasToolNameChars } from '../jsonrpc/names.js';

/** A list item with a usable name: a non-empty string (anything else is a protocol violation). */
export function hasName(item: unknown): item is Record<string, unknown> & { name: string } {
  return item !== null && typeof item === 'object' && typeof (item as { name?: unknown }).name === 'string' && (item as { name: string }).name !== '';
}
