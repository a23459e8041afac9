// How a task put to search_tools becomes weighted search words. A task mixes two kinds of words: what is
// to be done ("close issue", "list the pods") and the values it is to be done with (`acme/web`, `#42`,
// 'buy milk', config.yaml, https://…). Values say little about which tool does the job and much about
// which tool happens to mention the same string, so they count at a lower weight; the kind of thing a
// value is (a file, a web address) is a word of its own.

/** What a value counts for against a word of the task. */
const VALUE_WEIGHT = 0.5;

/** A word of the query and what it counts for. */
export interface QueryWord {
  word: string;
  weight: number;
  /** A word of what is to be done (not a value): only these have synonyms and form word pairs. */
  task: boolean;
}

/** Quoted text: 'buy milk', "Load more", `import x` (an apostrophe inside a word does not open one). */
const QUOTED = /(^|[\s(])(['"`])(.+?)\2(?=$|[\s.,;:!?)])/g;
/** Trailing punctuation of a token ("acme/web:", "sales.xlsx?"). */
const TRAIL = /[.,;:!?)]+$/;
const URL = /^([a-z][a-z0-9+.-]*:\/\/|www\.)|^[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|org|net|io|dev|ai|co|app|sh|me)(\/|$)/i;
/** File name extensions common enough that `x.ext` says "a file". */
const FILE = /\.(md|txt|json|ya?ml|toml|ini|env|xml|csv|tsv|log|pdf|docx?|xlsx?|pptx?|png|jpe?g|gif|svg|webp|ts|tsx|js|jsx|mjs|py|rb|go|rs|java|sh|sql|html?|css|zip|gz|tar|gitignore)$/i;
/** A token that is a value rather than a word: an identifier, path, number, reference or address. */
const VALUE = /[0-9/.:@#_~]/;

/** One whitespace-separated token: a word of the task, or a value and the kind of value it is. */
function classify(token: string, out: QueryWord[]): void {
  const t = token.replace(TRAIL, '');
  if (t.length === 0) return;
  if (!VALUE.test(t)) {
    out.push({ word: t, weight: 1, task: true });
    return;
  }
  if (URL.test(t)) out.push({ word: 'url', weight: 1, task: false });
  else if (FILE.test(t)) out.push({ word: 'file', weight: 1, task: false });
  out.push({ word: t, weight: VALUE_WEIGHT, task: false });
}

/** The query's tokens in order, each a word of the task or a value (see above). */
export function queryWords(query: string): QueryWord[] {
  const out: QueryWord[] = [];
  let at = 0;
  for (const m of query.matchAll(QUOTED)) {
    for (const token of query.slice(at, m.index).split(/\s+/)) classify(token, out);
    for (const w of m[3]!.split(/\s+/)) if (w.length > 0) out.push({ word: w, weight: VALUE_WEIGHT, task: false });
    at = m.index + m[0].length;
  }
  for (const token of query.slice(at).split(/\s+/)) classify(token, out);
  return out;
}

/** How a question starts: a question word, or a verb that asks whether ("is the crawl done", "are any running"). */
const QUESTION = /^(what|which|who|whose|where|when|why|how|is|are|was|were|does|do|did|has|have|had|any)\b|\?\s*$/i;
/** A request put as a question ("can you delete…?", "could we restart…?") asks for the action. */
const REQUEST = /^(can|could|would|will|should) (you|we|i)\b|^(please|pls)\b/i;

/**
 * Whether a task asks a question ("what issues are still open?", "which labels do I use?", "is the
 * crawl done yet?") rather than for an action: a question is answered by a tool that reads, even when
 * its words are those of a change ("open", "stored", "started", "running").
 */
export function isQuestion(query: string): boolean {
  const q = query.trim();
  return QUESTION.test(q) && !REQUEST.test(q);
}
