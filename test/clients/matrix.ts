// The client compatibility matrix: which MCP clients work through the quick start, over which
// transports, with which features. Each client's suite runs exactly what its row claims (client-suite.ts),
// and readme-table.test.ts holds README.md's "Client compatibility" table to these rows and to the
// versions installed, so the table cannot drift from what the tests prove.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

/** How a client reaches the gateway: Streamable HTTP on /mcp (a 2025 session, or 2026-07-28 stateless requests), or legacy HTTP+SSE on /sse. */
export const TRANSPORTS = {
  http: '`/mcp` 2025 session',
  modern: '`/mcp` 2026-07-28',
  sse: '`/sse`',
} as const;
export type TransportKey = keyof typeof TRANSPORTS;

/** true: tested on every transport of the row. A string: "no (why)": the client has no way to do it. */
export type Support = true | string;

export interface MatrixRow {
  client: string;
  /** The npm package whose installed version the row is about (pinned exactly in package.json). */
  package: string;
  transports: TransportKey[];
  progress: Support;
  sampling: Support;
  elicitation: Support;
  /** The test file that proves the row. */
  test: string;
}

const NO_HANDLERS = 'no (a one-shot CLI answers no server requests)';

export const MATRIX = {
  inspector: {
    client: 'MCP Inspector CLI (`mcp-inspector --cli`)',
    package: '@modelcontextprotocol/inspector',
    transports: ['http', 'modern', 'sse'],
    progress: 'no (it prints only the result)',
    sampling: NO_HANDLERS,
    elicitation: NO_HANDLERS,
    test: 'test/clients/inspector-cli.test.ts',
  },
  mcpRemote: {
    client: 'mcp-remote (the stdio bridge of desktop clients), driven over stdio',
    package: 'mcp-remote',
    transports: ['http', 'sse'],
    progress: true,
    sampling: true,
    elicitation: true,
    test: 'test/clients/mcp-remote.test.ts',
  },
  sdkV1: {
    client: 'TypeScript SDK v1 `Client`',
    package: '@modelcontextprotocol/sdk',
    transports: ['http', 'sse'],
    progress: true,
    sampling: true,
    elicitation: true,
    test: 'test/clients/sdk-v1.test.ts',
  },
  sdkV2: {
    client: 'TypeScript SDK v2 `Client`',
    package: '@modelcontextprotocol/client',
    transports: ['http', 'modern', 'sse'],
    progress: true,
    sampling: true,
    elicitation: true,
    test: 'test/clients/sdk-v2.test.ts',
  },
  aiSdk: {
    client: 'Vercel AI SDK `createMCPClient`',
    package: '@ai-sdk/mcp',
    transports: ['modern', 'http', 'sse'],
    progress: 'no (no progress callback in its API)',
    sampling: 'no (no sampling handler in its API)',
    elicitation: true,
    test: 'test/clients/ai-sdk.test.ts',
  },
  langchain: {
    client: 'LangChain `MultiServerMCPClient`',
    package: '@langchain/mcp-adapters',
    transports: ['http', 'sse'],
    progress: true,
    sampling: 'no (it declares no client capabilities)',
    elicitation: 'no (it declares no client capabilities)',
    test: 'test/clients/langchain.test.ts',
  },
} satisfies Record<string, MatrixRow>;

/** The installed package.json of a matrix client. */
export function installed(pkg: string): { version: string; engines?: { node?: string } } {
  return JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8'));
}

/** The README table, one line per row, rendered from MATRIX and the installed versions. */
export function renderTable(rows: MatrixRow[] = Object.values(MATRIX)): string {
  const cell = (s: Support) => (s === true ? 'yes' : s);
  const lines = [
    '| Client | Version | Needs Node | Transports | List, call tools | Progress | Sampling | Elicitation | Proved by |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const pkg = installed(r.package);
    const transports = r.transports.map((t) => TRANSPORTS[t]).join(', ');
    lines.push(`| ${r.client} | \`${r.package}\` ${pkg.version} | ${pkg.engines?.node ?? 'any'} | ${transports} | yes | ${cell(r.progress)} | ${cell(r.sampling)} | ${cell(r.elicitation)} | \`${r.test}\` |`);
  }
  return lines.join('\n');
}
