// How tool text becomes search terms, the same way for what is indexed and for a query: names split
// into their words (get_issue_comments, getIssueComments → get issue comments), lower case, English
// function words dropped, and a light stemmer so that "issues", "creating" and "created" meet "issue"
// and "create". Light on purpose: tool text is short, and an aggressive stemmer (Porter) merges words
// that a short text cannot tell apart again ("organization" and "organ").

/** Words that say nothing about what a tool does. */
const STOP = new Set(
  'a an and are as at be by can for from has have how i if in into is it its me my of on or our so that the their then this to was we what when which with you your'.split(' '),
);

/** Splits text into lower-case words: at non-alphanumerics, camelCase humps and letter/digit borders. */
export function words(text: string): string[] {
  const spaced = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    // A lookahead, not "([A-Z]+)([A-Z][a-z])": that backtracks through every capital run, quadratic in
    // its length, and upstream texts are indexed (a 2 MB description of capitals held the event loop for
    // most of an hour while the index was built).
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .replace(/([A-Za-z])([0-9])|([0-9])([A-Za-z])/g, (_m, a, b, c, d) => (a !== undefined ? `${a} ${b}` : `${c} ${d}`));
  return spaced.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 0);
}

/** A capitalised word with a hump inside it: a product's name (GitHub, MongoDB, JavaScript). */
const BRAND = /\b[A-Z][a-z]+[A-Z][A-Za-z]*\b/g;

/**
 * The words of text as search sees them: its words (see words), and each product name written with a
 * hump also as the one word it is ("GitHub" → git, hub, github). Split alone, "on GitHub" would name
 * the server called git and not the one called github (see NAMED_UPSTREAM in tool-index), and
 * "javascript" written in lower case would miss "JavaScript".
 * Kept apart from words, which names and embedding texts use as they are.
 */
export function searchWords(text: string): string[] {
  const out = words(text);
  for (const m of text.matchAll(BRAND)) out.push(m[0].toLowerCase());
  return out;
}

const DOUBLE = /([bdfgkmnprt])\1$/;

/** Drops a verb ending, undoubling what it leaves ("running" → "run"). */
function unverb(w: string, suffix: number): string {
  const stem = w.slice(0, -suffix);
  return DOUBLE.test(stem) ? stem.slice(0, -1) : stem;
}

/**
 * A light English stemmer (plural, -ing, -ed, -ation, final e). Not a dictionary: both sides of a
 * match go through it, so it only has to map the forms of one word to one stem, not to a real word.
 */
export function stem(w: string): string {
  if (w.length <= 3 || /[0-9]/.test(w)) return w;
  let s = w;
  if (s.endsWith('ies') && s.length > 4) s = `${s.slice(0, -3)}y`;
  else if (/(ss|x|ch|sh|z)es$/.test(s)) s = s.slice(0, -2);
  else if (s.endsWith('s') && !/(ss|us|is)$/.test(s)) s = s.slice(0, -1);
  if (s.endsWith('ing') && s.length > 5) s = unverb(s, 3);
  else if (s.endsWith('ed') && s.length > 4) s = unverb(s, 2);
  else if (s.endsWith('ation') && s.length > 6) s = s.slice(0, -3);
  if (s.endsWith('e') && s.length > 4) s = s.slice(0, -1);
  return s;
}

/** A word as it is indexed and searched: null for a stop word or a lone letter ("it's" → it, s). */
export function term(word: string): string | null {
  const w = word.toLowerCase();
  return STOP.has(w) || /^[a-z]$/.test(w) ? null : stem(w);
}
