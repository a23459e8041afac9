// Tenant policy and endpoint curation match tool names with the same globs.
const cache = new Map<string, RegExp>();

/** Glob to RegExp: "*" any run of characters, "?" one character, everything else literal. */
export function globToRegExp(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
    re = new RegExp(`^${body}$`, 's');
    cache.set(pattern, re);
  }
  return re;
}

export function globMatch(pattern: string, value: string): boolean {
  return pattern === '*' || globToRegExp(pattern).test(value);
}
