import { stem, words } from './search-terms.js';

export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';
export const DEFAULT_LIMIT = 8;
export const MAX_LIMIT = 50;
/** `{"tools":[]}`: a search_tools answer's JSON around its matches. */
export const ANSWER_FRAME = 12;

type Result = Record<string, unknown>;

/** What a search returns of a tool (`name`: the name it is called by): enough to call it. */
export function searchResult(name: string, d: Result): Result {
  const out: Result = { name };
  if (d.title !== undefined) out.title = d.title;
  out.description = d.description ?? '';
  out.inputSchema = d.inputSchema;
  if (d.annotations !== undefined) out.annotations = d.annotations;
  return out;
}

/** Each definition's searchResult length, kept while it lives: a view's definitions are made once per catalogue. */
const resultLengths = new WeakMap<object, number>();

/**
 * The longest JSON text a search_tools answer could have from these tools (the ones the caller may see, as
 * its screen shows them): their MAX_LIMIT longest results, whole. Of what the caller sees only, so that a
 * tool its policy denies does not show, through the cap's sentence, that something that large exists.
 */
export function longestAnswer(tools: readonly { readonly name: string; readonly definition: Result }[]): number {
  const lengths = tools.map(({ name, definition }) => {
    let n = resultLengths.get(definition);
    if (n === undefined) resultLengths.set(definition, (n = JSON.stringify(searchResult(name, definition)).length));
    return n;
  });
  return lengths.sort((a, b) => b - a).slice(0, MAX_LIMIT).reduce((n, l) => n + l + 1, ANSWER_FRAME - 1);
}

/** What a meta-tool description is generated from: the tools the caller may see. */
export interface SeenTool {
  readonly upstream: string;
  /** The upstream's own name for it. */
  readonly tool: string;
  /** The name the caller is shown, when curation renamed it: its words are the ones to describe it by. */
  readonly rename?: string | undefined;
  /** The name the caller is shown (a shortened one when the canonical name is too long) and the canonical name. */
  readonly name: string;
  readonly canonical: string;
}

/**
 * The words a tool is described by: a rename's; a shortened name's, which is the start of the canonical
 * name (less its "<upstream>__", the hash after it, and a word the cut splits); else the upstream's own name's.
 */
function nameWords(t: SeenTool): string[] {
  if (t.rename !== undefined) return words(t.rename);
  if (t.name === t.canonical) return words(t.tool);
  const kept = t.name.slice(t.canonical.length - t.tool.length, t.name.lastIndexOf('_'));
  const own = words(t.tool);
  const shown = words(kept);
  return shown.length > 0 && shown.at(-1) !== own[shown.length - 1] ? shown.slice(0, -1) : shown;
}

/** Name words that say what a tool does, not what it is about: left out of the "kinds of tools". */
const GENERIC = new Set(
  'get list create update delete set add remove read write search find fetch run by the a of to for and or with from all new info data tool tools item items id'.split(' '),
);

/**
 * Per upstream, how many tools and what they are about: the words its tool names use most (for
 * "github (26 tools: issue, pull, request, repository, branch)"). Only from tools the caller may see,
 * so a description never hints at a denied one.
 */
export function catalogueSummary(tools: readonly SeenTool[], topics = 6): string {
  // Counted by stem ("request" and "requests" are one topic), shown in the shortest form seen.
  const by = new Map<string, { count: number; words: Map<string, number>; shown: Map<string, string> }>();
  for (const t of tools) {
    let u = by.get(t.upstream);
    if (!u) by.set(t.upstream, (u = { count: 0, words: new Map(), shown: new Map() }));
    u.count++;
    // Not the upstream's own name when curation gave it another or cut it: the caller is shown the curated view only.
    for (const w of new Set(nameWords(t))) {
      if (w.length <= 2 || GENERIC.has(w) || /^[0-9]+$/.test(w)) continue;
      const s = stem(w);
      u.words.set(s, (u.words.get(s) ?? 0) + 1);
      const shown = u.shown.get(s);
      if (shown === undefined || w.length < shown.length) u.shown.set(s, w);
    }
  }
  const parts = [...by]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([upstream, u]) => {
      const top = [...u.words].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, topics).map(([s]) => u.shown.get(s)!);
      return `${upstream} (${u.count} tool${u.count === 1 ? '' : 's'}${top.length > 0 ? `: ${top.join(', ')}` : ''})`;
    });
  return parts.join('; ');
}

/**
 * The two tools a search-mode endpoint lists instead of its catalogue, described from what the caller
 * may see: how many tools, from which servers, about what. A model reads this to decide whether
 * searching is worth it, and which words to search with. `maxAnswerChars` (tools.maxSearchAnswerChars):
 * said in advance, so a model that meets "schemaOmitted" knows why and what to ask instead (search-answer.ts);
 * only when `capReachable` (some answer could be longer: longestAnswer), as elsewhere those words,
 * some 57 tokens in every tools/list, tell a model of a cap it can never meet.
 */
export function metaToolDefinitions(tools: readonly SeenTool[], maxAnswerChars: number, capReachable = true): Array<Record<string, unknown>> {
  const upstreams = [...new Set(tools.map((t) => t.upstream))].sort();
  const summary = tools.length === 0 ? 'No tools are available to you here.' : `${tools.length} tool${tools.length === 1 ? ' is' : 's are'} available, from: ${catalogueSummary(tools)}.`;
  const search: Record<string, unknown> = {
    name: SEARCH_TOOLS,
    title: 'Search tools',
    description: `Finds the tools for a task. ${summary} They are not listed here: search with a few words about what you want to do (e.g. "create an issue", "read a file"), then call the one you need with ${CALL_TOOL}. Returns the best matches with their names, descriptions and input schemas.` +
      (capReachable ? ` An answer over ${maxAnswerChars} characters omits input schemas from its lower matches ("schemaOmitted": search for its name alone to see it), then leaves matches out: ask with a smaller limit to keep them.` : ''),
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What you want to do, in a few words.' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: `How many matches to return at most${capReachable ? ` (an answer over ${maxAnswerChars} characters omits input schemas)` : ''}.` },
        ...(upstreams.length > 1 ? { upstream: { type: 'string', enum: upstreams, description: 'Only tools from this server.' } } : {}),
      },
      required: ['query'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
  const call: Record<string, unknown> = {
    name: CALL_TOOL,
    title: 'Call a tool',
    description: `Calls a tool that ${SEARCH_TOOLS} returned, with its arguments, and returns that tool's own result.`,
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: `The tool's exact name, as ${SEARCH_TOOLS} returned it.` },
        arguments: { type: 'object', description: "The tool's arguments, as its input schema describes them.", additionalProperties: true },
      },
      required: ['name'],
      additionalProperties: false,
    },
  };
  return [search, call];
}
