/**
 * Client-chosen text (a method, a tool name, a URI) cut for what the gateway keeps of it: span names
 * and attributes, audit lines, log lines. Longer than `max`, it is cut there and marked `…`.
 *
 * The kept part is a copy, not a slice: V8 gives a slice of a long string as a view into it, so a
 * 256-character slice of a 4 MB method would hold the whole 4 MB for as long as the span waits in the
 * export queue or the line in the audit ring. A lone high surrogate left at the cut is dropped.
 */
export function clipped(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return `${Buffer.from(text.slice(0, end), 'utf16le').toString('utf16le')}…`;
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
