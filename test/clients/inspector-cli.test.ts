// The MCP Inspector's CLI mode, run as the README shows (`mcp-inspector --cli URL --transport … --header
// "Authorization: Bearer …" --method …`), one process per command, on Node 22 or newer as it requires.
// It lists and calls tools; a one-shot CLI follows no progress and answers no server requests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeAtLeast } from '../helpers/node-binary.mjs';
import { runToExit } from '../helpers/processes.js';
import { clientSuite, textOf } from './client-suite.js';
import { MATRIX, ROOT } from './matrix.js';

const CLI = join(ROOT, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

clientSuite(MATRIX.inspector, async (transport, qs) => {
  const node = nodeAtLeast(22);
  // The Inspector keeps a catalog and OAuth state under $HOME: a temporary one.
  const home = mkdtempSync(join(tmpdir(), 'swb-inspector-'));
  const target = transport === 'sse' ? [`${qs.base}/sse`, '--transport', 'sse'] : [`${qs.base}/mcp`, '--transport', 'http'];
  const era = transport === 'modern' ? ['--protocol-era', 'modern'] : [];
  const token = qs.token();
  const run = async (...method: string[]) => {
    const args = [CLI, '--cli', ...target, ...era, '--header', `Authorization: Bearer ${token}`, '--stored-auth-only', ...method];
    const r = await runToExit(node, args, { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home }, timeoutMs: 60_000 });
    if (r.code !== 0) throw new Error(`mcp-inspector --cli ${method.join(' ')} exited ${r.code}: ${r.out}`);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };
  return {
    listTools: async () => ((await run('--method', 'tools/list')).tools as Array<{ name: string }>).map((t) => t.name),
    callTool: async (name, args = {}) =>
      textOf(await run('--method', 'tools/call', '--tool-name', name, ...Object.entries(args).flatMap(([k, v]) => ['--tool-arg', `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`]))),
    close: async () => rmSync(home, { recursive: true, force: true }),
  };
});
