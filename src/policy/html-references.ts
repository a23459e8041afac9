/**
 * HTML character references as a browser decodes them in an attribute value, and CommonMark in a link
 * destination: what the guardrails judge (a style, an image's URL) must be what the browser applies.
 */

/**
 * Named references that spell what the guardrails look for (`display&colon;none`, `https&colon;//…`);
 * HTML has none for a letter or a digit, which a numeric one spells.
 */
const NAMED: Readonly<Record<string, string>> = { colon: ':', semi: ';', equals: '=', quot: '"', apos: "'", tab: '\t', newline: '\n', period: '.', percnt: '%', excl: '!', sol: '/', bsol: '\\', ast: '*', lpar: '(', rpar: ')', num: '#', amp: '&', comma: ',', plus: '+', quest: '?', commat: '@' };
const REFERENCE = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]+));?/g;

export function codePoint(n: number): string {
  return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : '\uFFFD';
}

/** `s` with its numeric references and the named ones above decoded; any other `&` left as written. */
export function decodeReferences(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(REFERENCE, (m, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name === undefined) return codePoint(dec !== undefined ? Number(dec) : parseInt(hex!, 16));
    return m.endsWith(';') ? (NAMED[name.toLowerCase()] ?? m) : m;
  });
}
