/**
 * HTML character references as a browser decodes them in an attribute value, and CommonMark in a link
 * destination: what the guardrails judge (a style, an image's URL) must be what the browser applies.
 */

/**
 * Named references that spell what the guardrails look for (`display&colon;none`, `https&colon;//…`);
 * HTML has none for a letter or a digit, which a numeric one spells.
 */
const NAMED: Readonly<Record<string, string>> = { colon: ':', semi: ';', equals: '=', quot: '"', apos: "'", tab: '\t', newline: '\n', period: '.', percnt: '%', excl: '!', sol: '/', bsol: '\\', ast: '*', lpar: '(', rpar: ')', num: '#', amp: '&', comma: ',', plus: '+', quest: '?', commat: '@' };
/**
 * Every digit is read, as a browser reads them: leading zeros count for nothing (`&#0000000058;` is ":"), and a
 * number past U+10FFFF is U+FFFD. Before 2026-12-07 at most 7 digits (6 in hex) were, so `display&#0000000058;none`
 * was left undecoded and hid its element unfound. One pass, each digit once: a long run of digits stays linear.
 */
const REFERENCE = /&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|([a-zA-Z]+));?/g;
/** A reference's digits, past their leading zeros, longer than U+10FFFF's are (7 decimal, 6 hex): U+FFFD whatever they are. */
const LEADING_ZEROS = /^0+/;

export function codePoint(n: number): string {
  return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : '\uFFFD';
}

/** The code point a numeric reference's digits spell (`radix` 10 or 16), read whole. */
function numeric(digits: string, radix: number): string {
  const d = digits.replace(LEADING_ZEROS, '');
  return d.length > (radix === 10 ? 7 : 6) ? '\uFFFD' : codePoint(d === '' ? 0 : parseInt(d, radix));
}

/** `s` with its numeric references and the named ones above decoded; any other `&` left as written. */
export function decodeReferences(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(REFERENCE, (m, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name === undefined) return dec !== undefined ? numeric(dec, 10) : numeric(hex!, 16);
    return m.endsWith(';') ? (NAMED[name.toLowerCase()] ?? m) : m;
  });
}
