/**
 * A tag's attributes as a browser tokenizes them: a name, then `=` and a value, quoted (to its closing quote,
 * `>` and spaces in it) or not (to a space or `>`). A value is consumed whole, so text inside it is no
 * attribute: `title="x src=https://…"` has a title and no src. Read this way by the hiding checks
 * (style-declarations.ts) and by the fetch checks (outside-images.ts). Where it and a browser differ (a
 * quote inside an unquoted value, a name starting with `=`) it splits more, so it reads more attributes
 * than the browser has, never fewer; and every attribute of a name is read, not only the first a browser keeps.
 */

/**
 * One attribute: group 1 its name, 2–4 its value (quoted or not). The name and each value have one way to
 * match (no nested quantifiers): a long attribute text is read once.
 */
const ATTRIBUTE = /([^\s/>="']+|["'])(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']*)))?/g;

/**
 * Calls `each` with the name (lower case) and value of every attribute of `attrs` (a tag's text after its
 * name) that has a value and whose name `wanted` holds; stops at the first call that answers true, and answers it.
 */
export function someAttribute(attrs: string, wanted: (name: string) => boolean, each: (name: string, value: string) => boolean): boolean {
  ATTRIBUTE.lastIndex = 0; // exec, not matchAll: no copy of the expression per tag
  for (let m = ATTRIBUTE.exec(attrs); m !== null; m = ATTRIBUTE.exec(attrs)) {
    const value = m[2] ?? m[3] ?? m[4];
    if (value === undefined) continue;
    const name = m[1]!.toLowerCase();
    if (!wanted(name)) continue;
    const next = ATTRIBUTE.lastIndex;
    if (each(name, value)) return true;
    ATTRIBUTE.lastIndex = next; // \`each\` may read another tag's attributes
  }
  return false;
}

/** Whether `attrs` has an attribute named `name` (lower case), with a value or without one (`<div popover>`). */
export function hasAttribute(attrs: string, name: string): boolean {
  ATTRIBUTE.lastIndex = 0;
  for (let m = ATTRIBUTE.exec(attrs); m !== null; m = ATTRIBUTE.exec(attrs)) if (m[1]!.toLowerCase() === name) return true;
  return false;
}
