/**
 * The published MCP servers the tool-search corpus is collected from, at exact versions (a new release
 * would change the fixture silently otherwise). Chosen to overlap on purpose: three git hosts, two
 * browsers, three kinds of database, two chat tools, several web-search tools and two file servers, so
 * that "list", "search" and "create" each match many tools and retrieval has something to get wrong.
 *
 * `{work}` in args/env is the server's scratch folder. Every credential below is a dummy that only lets
 * the server start; nothing here reaches a real service (listing tools makes no outbound call).
 */
const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: dummy, cluster: { server: 'https://127.0.0.1:9' } }]
users: [{ name: dummy, user: { token: dummy } }]
contexts: [{ name: dummy, context: { cluster: dummy, user: dummy } }]
current-context: dummy
`;

export const SERVERS = [
  { name: 'filesystem', domain: 'files', package: '@modelcontextprotocol/server-filesystem', version: '2026.8.31', args: ['{work}/data'] },
  { name: 'memory', domain: 'knowledge graph', package: '@modelcontextprotocol/server-memory', version: '2026.8.31', env: { MEMORY_FILE_PATH: '{work}/data/memory.jsonl' } },
  { name: 'everything', domain: 'protocol demo', package: '@modelcontextprotocol/server-everything', version: '2026.8.31', args: ['stdio'] },
  { name: 'sequential-thinking', domain: 'reasoning', package: '@modelcontextprotocol/server-sequential-thinking', version: '2026.8.31' },
  { name: 'github', domain: 'git hosting', package: '@modelcontextprotocol/server-github', version: '2025.4.8', env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_dummy0000000000000000000000000000000' } },
  { name: 'gitlab', domain: 'git hosting', package: '@modelcontextprotocol/server-gitlab', version: '2025.4.25', env: { GITLAB_PERSONAL_ACCESS_TOKEN: 'glpat-dummy', GITLAB_API_URL: 'http://127.0.0.1:9/api/v4' } },
  { name: 'git', domain: 'local git', package: '@cyanheads/git-mcp-server', version: '2.15.3', env: { MCP_TRANSPORT_TYPE: 'stdio', MCP_LOG_LEVEL: 'error', GIT_BASE_DIR: '{work}/data' } },
  { name: 'puppeteer', domain: 'browser', package: '@modelcontextprotocol/server-puppeteer', version: '2025.5.12' },
  { name: 'playwright', domain: 'browser', package: '@playwright/mcp', version: '0.0.83', args: ['--headless'] },
  { name: 'postgres', domain: 'database', package: '@modelcontextprotocol/server-postgres', version: '0.6.2', args: ['postgresql://dummy:dummy@127.0.0.1:9/dummy'] },
  // Connects at start and exits when it cannot: the collector runs a scratch redis-server for it.
  { name: 'redis', domain: 'database', package: '@modelcontextprotocol/server-redis', version: '2025.4.25', args: ['{redis}'], needsRedis: true },
  { name: 'mongodb', domain: 'database', package: 'mongodb-mcp-server', version: '3.0.4', env: { MDB_MCP_TELEMETRY: 'disabled' } },
  { name: 'slack', domain: 'chat', package: '@modelcontextprotocol/server-slack', version: '2025.4.25', env: { SLACK_BOT_TOKEN: 'xoxb-dummy', SLACK_TEAM_ID: 'T00000000' } },
  { name: 'discord', domain: 'chat', package: 'discord-mcp', version: '2.4.0', env: { DISCORD_TOKEN: 'dummy' } },
  { name: 'brave-search', domain: 'web search', package: '@modelcontextprotocol/server-brave-search', version: '0.6.2', env: { BRAVE_API_KEY: 'dummy' } },
  { name: 'firecrawl', domain: 'web scraping', package: 'firecrawl-mcp', version: '3.26.0', env: { FIRECRAWL_API_KEY: 'fc-dummy' } },
  { name: 'tavily', domain: 'web search', package: 'tavily-mcp', version: '0.2.22', env: { TAVILY_API_KEY: 'tvly-dummy' } },
  { name: 'exa', domain: 'web search', package: 'exa-mcp-server', version: '3.4.1', env: { EXA_API_KEY: 'dummy' } },
  { name: 'google-maps', domain: 'maps', package: '@modelcontextprotocol/server-google-maps', version: '0.6.2', env: { GOOGLE_MAPS_API_KEY: 'dummy' } },
  // Reads its kubeconfig at start; a cluster that does not exist is enough to list tools.
  { name: 'kubernetes', domain: 'infrastructure', package: 'mcp-server-kubernetes', version: '4.1.7', env: { KUBECONFIG: '{work}/data/kubeconfig' }, files: { 'data/kubeconfig': KUBECONFIG } },
  { name: 'notion', domain: 'docs', package: '@notionhq/notion-mcp-server', version: '2.5.2', env: { NOTION_TOKEN: 'ntn_dummy' } },
  { name: 'context7', domain: 'library docs', package: '@upstash/context7-mcp', version: '4.1.1' },
  { name: 'desktop-commander', domain: 'files and shell', package: '@wonderwhy-er/desktop-commander', version: '0.2.52', bin: 'desktop-commander' },
  { name: 'airtable', domain: 'spreadsheets', package: 'airtable-mcp-server', version: '1.14.0', env: { AIRTABLE_API_KEY: 'patdummy.dummy' } },
  { name: 'todoist', domain: 'tasks', package: 'todoist-mcp', version: '1.3.4', env: { API_KEY: 'dummy', TODOIST_API_TOKEN: 'dummy' } },
  { name: 'sentry', domain: 'monitoring', package: '@sentry/mcp-server', version: '0.39.0', args: ['--access-token=dummy'] },
];

/** Tried and left out, with the reason, so that nobody spends the same hour again. */
export const LEFT_OUT = [
  { package: '@supabase/mcp-server-supabase', version: '0.13.0', reason: 'tools/list awaits a fetch of the Supabase docs GraphQL schema from supabase.com; without it the list fails ("fetch failed")' },
  { package: '@stripe/mcp', version: '0.3.3', reason: 'a stdio proxy for the remote server at mcp.stripe.com; it has no tools of its own' },
  { package: '@heroku/mcp-server', version: '1.2.8', reason: "does not start: it imports '@modelcontextprotocol/sdk/server/mcp' (no .js), which the exports map of the SDK its ^1.26.0 range resolves to (1.32.2) does not resolve" },
];
