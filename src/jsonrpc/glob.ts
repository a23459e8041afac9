// Tenant policy and endpoint curation match tool names with the same globs.

/**
 * Whether `value` matches the glob: "*" any run of characters, "?" one character (one UTF-16 unit),
 * everything else literal, the whole value. Matched by the two-pointer walk (a star remembers where it
 * stood; a mismatch moves it one character on), never by a backtracking regular expression: `value` is
 * a client's (a tools/call name, a resource URI, up to a request body's size), and "*secret*key*" as
 * /^.*secret.*key.*$/ took time quadratic in a value it did not match (a 1.5 MB name: tens of minutes
 * of a blocked event loop). This walk takes at most pattern × value steps, and patterns are short.
 */
export function globMatch(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  let p = 0;
  let v = 0;
  let star = -1; // where the last "*" stood in the pattern
  let from = 0; // where in the value its run ends for now
  while (v < value.length) {
    const c = pattern[p];
    if (c === '*') {
      star = p++;
      from = v;
    } else if (c !== undefined && (c === '?' || c === value[v])) {
      p++;
      v++;
    } else if (star !== -1) {
      p = star + 1;
      v = ++from;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
