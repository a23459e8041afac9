/** "<upstream>__<name>": upstream names never contain "__", so the first "__" always splits correctly. */
export const DELIMITER = '__';
const MCP_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const MCP_CHARS = /^[A-Za-z0-9_.-]+$/;

export function prefixed(upstream: string, name: string): string {
  return `${upstream}${DELIMITER}${name}`;
}

export function splitPrefixed(name: string): { upstream: string; name: string } | undefined {
  const i = name.indexOf(DELIMITER);
  if (i <= 0) return undefined;
  return { upstream: name.slice(0, i), name: name.slice(i + DELIMITER.length) };
}

export function isValidToolName(name: string): boolean {
  return MCP_NAME.test(name);
}

/** Only characters a tool name may have (any length: a long name is shortened, see router/short-names.ts). */
export function hasToolNameChars(name: string): boolean {
  return MCP_CHARS.test(name);
}
