// The catalogue view of an endpoint: search terms (name splitting, stemming), ranking over names,
// descriptions and parameters, curation (include/exclude, rename, overrides) keyed by canonical name,
// and the determinism replicas rely on (the same catalogue in any order ranks the same).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { embeddingsSchema } from '../../../src/config/tools-schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { Curation } from '../../../src/router/curation.js';
import { catalogueSummary, longestAnswer, metaToolDefinitions } from '../../../src/router/meta-tools.js';
import { isQuestion, queryWords } from '../../../src/router/search-query.js';
import { stem, term, words } from '../../../src/router/search-terms.js';
import { SemanticRanker } from '../../../src/router/semantic-ranker.js';
import { ToolView } from '../../../src/router/tool-view.js';
import { startEmbeddingsServer } from '../../helpers/embeddings-server.js';

type Def = Record<string, unknown>;
const tool = (name: string, description: string, properties: Record<string, Def> = {}): Def => ({ name, description, inputSchema: { type: 'object', properties } });

const GH = [
  tool('create_issue', 'Open a new issue in a repository.', { title: { type: 'string', description: 'Issue title' } }),
  tool('get_issue_comments', 'Get the comments of an issue.'),
  tool('list_pull_requests', 'List the pull requests of a repository.'),
  tool('delete_repository', 'Delete a repository for good.'),
  tool('searchCode', 'Search source code across repositories.'),
];
const FS = [tool('read_file', 'Read the contents of a file.', { path: { type: 'string', description: 'Absolute path' } }), tool('write_file', 'Write a file.'), tool('list_directory', 'List a directory.')];
const CHAT = [tool('post_message', 'Post to a place.', { channel: { type: 'string', description: 'Channel name' } })];

const catalogue = (defs: Def[]) => new Map(defs.map((d) => [d.name as string, d]));
const NONE = new Curation('', [{ exclude: [], overrides: {} }]);

function view(o: { curation?: Curation; max?: number; reverse?: boolean; reserved?: string[] } = {}): ToolView {
  const entries: Array<[string, Def[]]> = [
    ['gh', GH],
    ['fs', FS],
    ['chat', CHAT],
  ];
  const ordered = o.reverse ? entries.reverse().map(([u, d]): [string, Def[]] => [u, [...d].reverse()]) : entries;
  return new ToolView({ catalogues: new Map(ordered.map(([u, d]) => [u, catalogue(d)])), curation: o.curation ?? NONE, maxNameLength: o.max ?? 64, prefixNames: true, reserved: o.reserved ?? [] });
}

describe('search terms', () => {
  it('split names at underscores, hyphens, dots, camelCase humps and digits', () => {
    assert.deepEqual(words('get_issue_comments'), ['get', 'issue', 'comments']);
    assert.deepEqual(words('getIssueComments'), ['get', 'issue', 'comments']);
    assert.deepEqual(words('parseHTMLDocument v2-beta.x'), ['parse', 'html', 'document', 'v', '2', 'beta', 'x']);
  });

  it('stem the forms of one word to one stem, and keep short words and function words apart', () => {
    for (const [a, b] of [['issues', 'issue'], ['creating', 'create'], ['created', 'creation'], ['queries', 'query'], ['branches', 'branch'], ['running', 'run'], ['files', 'file']]) {
      assert.equal(stem(a!), stem(b!), `${a} ~ ${b}`);
    }
    assert.equal(stem('status'), 'status');
    assert.equal(stem('access'), 'access');
    assert.equal(term('the'), null);
    assert.equal(term('s'), null, "the s of it's");
  });

  it('tell a task’s words from its values: quoted text, paths, numbers, references, addresses', () => {
    const q = queryWords("close #42 in acme/web, add 'buy milk' to it's list: https://x.com/a and notes/plan.md");
    const task = q.filter((w) => w.task).map((w) => w.word);
    const values = q.filter((w) => !w.task).map((w) => `${w.word}:${w.weight}`);
    assert.deepEqual(task, ['close', 'in', 'add', 'to', "it's", 'list', 'and']);
    assert.deepEqual(values, ['#42:0.5', 'acme/web:0.5', 'buy:0.5', 'milk:0.5', 'url:1', 'https://x.com/a:0.5', 'file:1', 'notes/plan.md:0.5']);
  });
});

describe('searching a view', () => {
  const top = (v: ToolView, q: string) => v.search(q)[0]?.name;

  it('finds a tool by what it does, by its name written any way, and by its parameters', () => {
    const v = view();
    assert.equal(top(v, 'comments on an issue'), 'gh__get_issue_comments');
    assert.equal(top(v, 'getIssueComments'), 'gh__get_issue_comments');
    assert.equal(top(v, 'creating issues'), 'gh__create_issue');
    assert.equal(top(v, 'read a file'), 'fs__read_file');
    assert.equal(top(v, 'pull requests'), 'gh__list_pull_requests');
    assert.equal(top(v, 'channel'), 'chat__post_message', 'found by a parameter name and its description');
    assert.equal(top(v, 'repo'), v.search('repository')[0]?.name, 'a word prefix matches the longer word');
    assert.deepEqual(v.search('zebra xylophone'), []);
  });

  it('ranks a query the same before and after other searches (kept term scores change nothing)', () => {
    const fresh = view().search('read the comments of a file');
    const used = view();
    for (const q of ['comments', 'file contents', 'pull requests', 'zebra', 'read the comments of a file']) used.search(q);
    assert.deepEqual(used.search('read the comments of a file').map((t) => t.name), fresh.map((t) => t.name));
  });

  it('ranks the same whatever order the catalogue was listed in (what replicas rely on)', () => {
    const a = view();
    const b = view({ reverse: true });
    for (const q of ['issue', 'file', 'list', 'repository', 'search code', 'post']) assert.deepEqual(b.search(q).map((t) => t.name), a.search(q).map((t) => t.name), q);
  });
});

describe('ranking beyond the query words', () => {
  const OPS = [
    tool('restart_service', 'Restart a systemd unit.'),
    tool('unit_status', 'Show the state of a systemd unit.'),
    tool('set_theme', 'Change how pages look.', { scheme: { type: 'string', enum: ['dark', 'light'] } }),
    tool('post_note', 'Post a note.'),
  ];
  const ops = new ToolView({ catalogues: new Map([['ops', catalogue(OPS)]]), curation: NONE, maxNameLength: 64, prefixNames: true, reserved: [] });

  it('finds a tool by the values its parameters take', () => {
    assert.equal(top(ops, 'dark'), 'ops__set_theme');
  });

  it('ranks a name that says the query’s words in its order above one that has them apart', () => {
    // The same words and texts: only the pair "pull request" in zap_pull_request tells them apart.
    const defs = [tool('pull_zap_request', 'Handle one.'), tool('zap_pull_request', 'Handle one.')];
    const v = new ToolView({ catalogues: new Map([['x', catalogue(defs)]]), curation: NONE, maxNameLength: 64, prefixNames: true, reserved: [] });
    assert.deepEqual(v.search('pull request').map((t) => t.name), ['x__zap_pull_request', 'x__pull_zap_request']);
  });

  it('counts a task’s values below the words of what is to be done', () => {
    const defs = [tool('add_task', 'Add a task.'), tool('buy_item', 'Buy milk from the shop.')];
    const v = new ToolView({ catalogues: new Map([['x', catalogue(defs)]]), curation: NONE, maxNameLength: 64, prefixNames: true, reserved: [] });
    assert.equal(top(v, "add 'buy milk from the shop' to my tasks"), 'x__add_task');
  });

  it('answers a question with a tool that reads, even when the question says a change ("stored", "open")', () => {
    const defs = [tool('set', 'Store a value under a key.'), tool('get', 'Get the value stored under a key.'), tool('create_issue', 'Open a new issue.'), tool('list_issues', 'List the issues, open or closed.')];
    const v = new ToolView({ catalogues: new Map([['kv', catalogue(defs)]]), curation: NONE, maxNameLength: 64, prefixNames: true, reserved: [] });
    assert.equal(top(v, "what's stored under the key session:1?"), 'kv__get');
    assert.equal(top(v, 'store this under the key session:1'), 'kv__set');
    assert.equal(top(v, 'which issues are still open?'), 'kv__list_issues');
    assert.ok(isQuestion('is the crawl done yet?') && isQuestion('how many users signed up?'));
    assert.ok(!isQuestion('can you delete the branch?') && !isQuestion('close the browser'));
  });

  it('ranks a tool that destroys below its sibling that saves when the task says no destroying verb', () => {
    const defs = [tool('save_observations', 'Save observations about an entity.'), tool('delete_observations', 'Delete observations about an entity.')];
    const v = new ToolView({ catalogues: new Map([['m', catalogue(defs)]]), curation: NONE, maxNameLength: 64, prefixNames: true, reserved: [] });
    assert.equal(top(v, 'observations on Bob: he works at Initech'), 'm__save_observations');
    assert.equal(top(v, 'drop the observations on Bob'), 'm__delete_observations');
  });

  it('takes a two-word phrase of the synonym table as one unit ("PR" is a pull request, not a merge)', () => {
    const defs = [tool('create_pull_request', 'Open a pull request.'), tool('merge_branch', 'Merge a branch into another.')];
    const v = new ToolView({ catalogues: new Map([['x', catalogue(defs)]]), curation: NONE, maxNameLength: 64, prefixNames: true, reserved: [] });
    assert.deepEqual(v.search('PR').map((t) => t.name), ['x__create_pull_request']);
  });

  it('brings in the tools that share the best match’s own words (pseudo-relevance feedback), below it', () => {
    // "restart nginx" names no word of unit_status; the best match's words (systemd unit) do.
    assert.deepEqual(ops.search('restart nginx').map((t) => t.name), ['ops__restart_service', 'ops__unit_status']);
  });
});

describe('curation', () => {
  // prefix always: the views here prefix (an endpoint showing gh unprefixed refuses gh__ patterns).
  const cfg = (tools: Record<string, unknown>) => parseConfig({ upstreams: [{ name: 'gh', transport: 'stdio', command: 'x' }], endpoints: [{ path: '/mcp', upstreams: ['gh'], prefix: 'always', tools }] }, 'test', {}).endpoints[0]!.tools;

  it('includes, excludes, renames and overrides by canonical name; schemas and the raw definition stay the upstream’s', () => {
    const { common } = Curation.forEndpoint(
      cfg({ include: ['gh__*', 'fs__read_*'], exclude: ['gh__delete_*'], overrides: { fs__read_file: { name: 'read', title: 'Read', description: 'Reads a file.', annotations: { readOnlyHint: true } } } }),
    );
    const v = view({ curation: common });
    assert.deepEqual(v.tools.map((t) => t.name).sort(), ['gh__create_issue', 'gh__get_issue_comments', 'gh__list_pull_requests', 'gh__searchCode', 'read']);
    const read = v.named('read')!;
    assert.equal(read.canonical, 'fs__read_file');
    assert.equal(read.tool, 'read_file');
    assert.deepEqual(read.definition, { ...FS[0], name: 'read', title: 'Read', description: 'Reads a file.', annotations: { readOnlyHint: true } });
    assert.equal(read.raw, FS[0], 'pins hash what the upstream reported');
    assert.equal(v.named('fs__read_file'), undefined, 'the canonical name of a renamed tool is not exposed');
    assert.equal(v.exposedName('gh__delete_repository'), undefined);
    assert.equal(v.search('delete repository').some((t) => t.canonical === 'gh__delete_repository'), false);
    assert.equal(top(v, 'read'), 'read');
  });

  it('a tenant’s layer narrows the endpoint’s and its override fields win', () => {
    const { common, tenants } = Curation.forEndpoint(cfg({ exclude: ['chat__*'], overrides: { gh__create_issue: { title: 'New issue', annotations: { a: 1 } } }, tenants: { anonymous: { exclude: ['fs__*'], overrides: { gh__create_issue: { description: 'Tenant text', annotations: { b: 2 } } } } } }));
    const mine = view({ curation: tenants.get('anonymous')! });
    assert.deepEqual(mine.tools.map((t) => t.upstream).filter((u, i, a) => a.indexOf(u) === i), ['gh']);
    assert.deepEqual(mine.named('gh__create_issue')!.definition, { ...GH[0], name: 'gh__create_issue', title: 'New issue', description: 'Tenant text', annotations: { a: 1, b: 2 } });
    assert.ok(view({ curation: common }).named('fs__read_file'));
  });

  it("search finds a renamed tool by its new name, not the upstream's own the caller is never shown (found by a review)", async () => {
    const renamed = new Curation('', [{ exclude: [], overrides: { gh__searchCode: { name: 'scan_corpus', description: 'Scan the corpus.' } } }]);
    const v = view({ curation: renamed });
    const found = (q: string) => v.search(q).map((t) => t.name);
    assert.deepEqual(found('scan corpus'), ['scan_corpus']);
    // Before, the upstream's own name was indexed too: its words found (and ranked) a tool listed under another name.
    for (const q of ['searchCode', 'search code', 'searchcode']) assert.equal(found(q).includes('scan_corpus'), false, q);
    // The same goes for the text a tool is embedded by (hybrid search).
    const provider = await startEmbeddingsServer();
    try {
      const semantic = new SemanticRanker(embeddingsSchema.parse({ url: provider.url, model: 'm' }), createLogger('silent'));
      const hybrid = new ToolView({ catalogues: new Map([['gh', catalogue(GH)]]), curation: renamed, maxNameLength: 64, prefixNames: true, reserved: [], semantic });
      await hybrid.vectors();
      const texts = provider.requests.flatMap((r) => r.inputs);
      const text = texts.find((t) => /corpus/.test(t));
      assert.ok(text, texts.join(' | '));
      assert.doesNotMatch(text, /search|code/i);
      assert.ok(texts.some((t) => /^gh: create issue\b/.test(t)), 'a tool not renamed keeps its own name words');
    } finally {
      await provider.close();
    }
  });

  it('a reserved (meta-tool) name shadows a tool that has it', () => {
    const v = new ToolView({ catalogues: new Map([['u', catalogue([tool('search_tools', 'x'), tool('ok', 'y')])]]), curation: NONE, maxNameLength: 64, prefixNames: false, reserved: ['search_tools', 'call_tool'] });
    assert.deepEqual(v.tools.map((t) => t.name), ['ok']);
    assert.deepEqual(v.shadowed, ['search_tools']);
  });
});

describe('meta-tool descriptions', () => {
  it('say how many tools, from which upstreams, about what: only from what the caller may see', () => {
    const v = view();
    const seen = v.tools.filter((t) => t.upstream !== 'chat' && t.tool !== 'delete_repository');
    const summary = catalogueSummary(seen);
    assert.match(summary, /^fs \(3 tools: .*\); gh \(4 tools: .*issue.*\)$/);
    assert.doesNotMatch(summary, /chat|delete/);
    const [search, call] = metaToolDefinitions(seen, 65_536);
    assert.equal(search!.name, 'search_tools');
    assert.match(String(search!.description), /7 tools are available/);
    assert.deepEqual((search!.inputSchema as any).properties.upstream.enum, ['fs', 'gh']);
    assert.equal(call!.name, 'call_tool');
  });

  it('take their words from a renamed tool\'s new name, not the upstream\'s own (found by a review)', () => {
    const renamed = new Curation('', [{ exclude: [], overrides: { gh__searchCode: { name: 'find_snippets' } } }]);
    const gh = view({ curation: renamed }).tools.filter((t) => t.upstream === 'gh');
    assert.equal(catalogueSummary(gh), 'gh (5 tools: issue, comments, pull, repository, requests, snippets)');
    assert.doesNotMatch(String(metaToolDefinitions(gh, 65_536)[0]!.description), /code/);
  });

  it("take a shortened name's words from what it keeps: not the part cut off, nor its hash (found by a review)", () => {
    const long = (max: number) =>
      new ToolView({ catalogues: new Map([['gh', catalogue([tool('create_pull_request_review_comment', 'Comment on a pull request review.')])]]), curation: NONE, maxNameLength: max, prefixNames: true, reserved: [] }).tools;
    // 35 characters keep 24 of gh__create_pull_request_review_comment (38), then "_" and 10 hex digits.
    const [kept] = long(35);
    assert.match(kept!.name, /^gh__create_pull_request__[0-9a-f]{10}$/);
    assert.equal(catalogueSummary(long(35)), 'gh (1 tool: pull, request)', 'review and comment are cut off: not in the name the caller is shown');
    // 32 keep 21, "gh__create_pull_reque": a word the cut splits is left out.
    assert.equal(catalogueSummary(long(32)), 'gh (1 tool: pull)');
    assert.equal(catalogueSummary(long(64)), 'gh (1 tool: comment, pull, request, review)', 'not shortened: all its words');
  });

  it("tell the model of the answer's cap: past it input schemas are omitted, and how to see one (found by a review)", () => {
    const [search] = metaToolDefinitions(view().tools, 4096);
    // Before, nothing said so: a model that asked for 50 matches met "schemaOmitted" with no hint why.
    assert.match(String(search!.description), /answer over 4096 characters omits input schemas .*"schemaOmitted".*search for its name alone.*smaller limit/);
    assert.match(String((search!.inputSchema as any).properties.limit.description), /4096 characters/);
  });

  it('name the cap only where an answer could reach it, by the texts the caller is shown (a strip may lengthen one)', () => {
    const v = view();
    const own = longestAnswer(v.tools);
    assert.ok(own < 4096, `${own} characters`);
    const [search] = metaToolDefinitions(v.tools, 4096, own > 4096);
    assert.doesNotMatch(JSON.stringify(search), /4096|schemaOmitted/);
    // A screen whose clean copies are longer ("[removed]" for a shorter match): the bound grows with them.
    const longer = v.tools.map((t) => ({ ...t, definition: { ...t.definition, description: `${String(t.definition.description ?? '')}${'[removed]'.repeat(10)}` } }));
    assert.equal(longestAnswer(longer), own + 90 * Math.min(v.tools.length, 50));
  });
});

function top(v: ToolView, q: string): string | undefined {
  return v.search(q)[0]?.name;
}
