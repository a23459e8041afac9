import { z } from 'zod';
import { sentHeaders } from './header-schema.js';
import { httpUrl } from './http-url.js';

// The `tools:` part of an endpoint: how its catalogue is exposed (all of it, or search meta-tools),
// how it is curated (per endpoint and per tenant), and how long an exposed name may be.

/** An exposed tool name: what the MCP rule allows (a client checks it). */
const toolName = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, '1-128 of [A-Za-z0-9_.-] (the MCP tool name rule)');

/** What an override may change of one tool; its schemas are never rewritten (pins hash the upstream's own). */
const override = z
  .object({
    /** The name clients see instead (calls with it reach the upstream's own name). */
    name: toolName.optional(),
    title: z.string().min(1).optional(),
    description: z.string().min(1).optional(),
    /** Merged over the upstream's annotations (readOnlyHint, destructiveHint, …). */
    annotations: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/**
 * Include/exclude globs and overrides, keyed by the canonical name: "<upstream>__<tool>" on an
 * endpoint that prefixes, the upstream's own name otherwise (the name tenant policy matches).
 */
const curation = {
  /** Globs; absent: every tool. A tool is exposed when it matches one and no exclude glob. */
  include: z.array(z.string().min(1)).optional(),
  exclude: z.array(z.string().min(1)).default([]),
  overrides: z.record(z.string().min(1), override).default({}),
};

/**
 * An OpenAI-compatible embeddings endpoint (POST {model, input: [texts]} → {data: [{embedding, index}]})
 * for hybrid search: its ranking is fused with the lexical one. Off unless configured; when it fails or
 * is slow, search answers from the lexical index alone.
 */
export const embeddingsSchema = z
  .object({
    /** The embeddings URL itself, e.g. https://api.openai.com/v1/embeddings or a local server's. */
    url: httpUrl('tools.embeddings'),
    model: z.string().min(1),
    /** Sent with every request; credentials go here as ${ENV} (e.g. Authorization: Bearer ${OPENAI_API_KEY}). */
    headers: sentHeaders,
    /** Asked of models that can shorten their vectors (text-embedding-3-*); absent: the model's own size. */
    dimensions: z.number().int().min(1).max(8192).optional(),
    /** The semantic ranking's share of the fused one (reciprocal rank fusion); the lexical one has the rest. */
    weight: z.number().min(0).max(1).default(0.5),
    /** A query's embedding that takes longer than this is not waited for (that search is lexical only). */
    timeoutMs: z.number().int().min(50).max(60_000).default(2_000),
    /** Tool texts per request while a catalogue is embedded. */
    batchSize: z.number().int().min(1).max(2048).default(64),
  })
  .strict();

export type EmbeddingsConfig = z.output<typeof embeddingsSchema>;

export const toolsSchema = z
  .object({
    /**
     * all: tools/list returns the (curated) catalogue. search: it returns the meta-tools search_tools and
     * call_tool instead. search+working-set: as search, and a 2025 session's list grows by what it found.
     */
    exposure: z.enum(['all', 'search', 'search+working-set']).default('all'),
    /** Exposed names longer than this are shortened to a readable stem and a stable hash of the full name. */
    maxToolNameLength: z.number().int().min(32).max(128).default(64),
    /** The longest search_tools answer (its JSON text, in characters): matches that do not fit lose their input schemas, then are left out. */
    maxSearchAnswerChars: z.number().int().min(4096).max(4_194_304).default(65_536),
    ...curation,
    /** Hybrid search with an embeddings provider (search modes only); absent: the lexical index alone. */
    embeddings: embeddingsSchema.optional(),
    /** A tenant's own curation, applied on top of the endpoint's (both must admit a tool). */
    tenants: z.record(z.string().min(1), z.object(curation).strict()).default({}),
  })
  .strict()
  .prefault({});

export type ToolsConfig = z.output<typeof toolsSchema>;
export type CurationConfig = Pick<ToolsConfig, 'include' | 'exclude' | 'overrides'>;

/** Hash characters of a shortened name, and the "_" before them: what a stem must leave room for. */
export const SHORT_SUFFIX = 11;

/**
 * Cross-field rules of one endpoint's `tools:` (called from the config schema's superRefine): tenants
 * that exist, renames that are unique, fit, and cannot be mistaken for a prefixed name, and upstream
 * names short enough that a shortened name keeps its whole "<upstream>__" prefix (routing reads it).
 */
export function toolsProblems(tools: ToolsConfig, upstreams: readonly string[], prefixes: boolean, tenantNames: ReadonlySet<string>): Array<{ path: Array<string | number>; message: string }> {
  const problems: Array<{ path: Array<string | number>; message: string }> = [];
  const max = tools.maxToolNameLength;
  if (tools.embeddings !== undefined && tools.exposure === 'all') problems.push({ path: ['embeddings'], message: 'embeddings rank search_tools answers: set exposure to search or search+working-set, or remove embeddings' });
  for (const t of Object.keys(tools.tenants)) {
    if (!tenantNames.has(t)) problems.push({ path: ['tenants', t], message: `no tenant is named "${t}"` });
  }
  if (prefixes) {
    for (const u of upstreams) {
      if (u.length + 2 + 1 + SHORT_SUFFIX > max) problems.push({ path: ['maxToolNameLength'], message: `${max} leaves no room for a shortened name of upstream "${u}" (needs at least ${u.length + 3 + SHORT_SUFFIX})` });
    }
  }
  const sets: Array<[Array<string | number>, CurationConfig]> = [[[], tools], ...Object.entries(tools.tenants).map(([t, c]): [Array<string | number>, CurationConfig] => [['tenants', t], c])];
  for (const [base, c] of sets) {
    // A tenant's renames join the endpoint's (those the tenant does not rename again).
    const seen = new Map<string, string>();
    if (c !== tools) for (const [canonical, o] of Object.entries(tools.overrides)) if (o.name !== undefined && c.overrides[canonical]?.name === undefined) seen.set(o.name, canonical);
    for (const [canonical, o] of Object.entries(c.overrides)) {
      if (o.name === undefined) continue;
      const path = [...base, 'overrides', canonical, 'name'];
      if (o.name.length > max) problems.push({ path, message: `"${o.name}" is longer than maxToolNameLength (${max})` });
      if (o.name === 'search_tools' || o.name === 'call_tool') problems.push({ path, message: `"${o.name}" is the name of a search meta-tool` });
      const owner = upstreams.find((u) => o.name!.startsWith(`${u}__`));
      if (prefixes && owner) problems.push({ path, message: `"${o.name}" reads as a name of upstream "${owner}": choose a name that does not start with "${owner}__"` });
      const twice = seen.get(o.name);
      if (twice !== undefined) problems.push({ path, message: `"${o.name}" is also the new name of "${twice}"` });
      seen.set(o.name, canonical);
    }
  }
  if (!prefixes && upstreams.length === 1) problems.push(...unprefixedProblems(sets, upstreams[0]!));
  return problems;
}

/**
 * An endpoint that shows its one upstream unprefixed: curation matches the upstream's own names there
 * (delete_repository), so a glob or override key written "<upstream>__…" (for an endpoint that prefixes,
 * or left from one a reload took down to one upstream) matches nothing: an exclude meant to hide a tool
 * would leave it exposed, without a word.
 */
function unprefixedProblems(sets: ReadonlyArray<[Array<string | number>, CurationConfig]>, upstream: string): Array<{ path: Array<string | number>; message: string }> {
  const prefix = `${upstream}__`;
  const problem = (path: Array<string | number>, written: string) => ({
    path,
    message: `"${written}" can match no tool: this endpoint shows upstream "${upstream}" unprefixed, so the names curation matches are the upstream's own; write it without "${prefix}"`,
  });
  const out: Array<{ path: Array<string | number>; message: string }> = [];
  for (const [base, c] of sets) {
    for (const key of ['include', 'exclude'] as const) (c[key] ?? []).forEach((g, i) => g.startsWith(prefix) && out.push(problem([...base, key, i], g)));
    for (const canonical of Object.keys(c.overrides)) if (canonical.startsWith(prefix)) out.push(problem([...base, 'overrides', canonical], canonical));
  }
  return out;
}
