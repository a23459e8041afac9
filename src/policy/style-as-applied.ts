/**
 * Style text as a browser applies it: what the guardrails judge in a `style` attribute or a `<style>` (a
 * hiding declaration, a `url()` fetched as the page loads) must be what the browser reads, not what is written.
 */
import { codePoint, decodeReferences } from './html-references.js';

const CSS_COMMENT = /\/\*[\s\S]*?(?:\*\/|$)/g;
const CSS_ESCAPE = /\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|([^\n\r\f0-9a-fA-F]))/g;

/**
 * Character references decoded (an attribute value's), then CSS comments removed and CSS escapes decoded
 * (a style's). Tested as written, `display&colon;none`, `display:/**\/none` and `display:\6e one` hid an
 * element unfound before 2026-12-06. Only text holding `&`, `/*` or `\` pays for it. A `<style>`'s text in
 * HTML keeps its references (raw text), in XML decodes them: decoded, a rule reads the XML case too.
 */
export function asApplied(css: string): string {
  if (!css.includes('&') && !css.includes('/*') && !css.includes('\\')) return css;
  return cssAsApplied(decodeReferences(css));
}

/** CSS comments removed and CSS escapes decoded: text whose references are decoded already (one declaration of a style). */
export function cssAsApplied(css: string): string {
  if (!css.includes('/*') && !css.includes('\\')) return css;
  return css.replace(CSS_COMMENT, '').replace(CSS_ESCAPE, (_m, hex: string | undefined, c: string | undefined) => (hex !== undefined ? codePoint(parseInt(hex, 16)) : c!));
}
