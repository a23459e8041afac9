import { loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { Gateway } from './gateway.js';
import { createLogger } from './observability/logger.js';
import type { Curation } from './router/curation.js';
import type { ToolView } from './router/tool-view.js';
import type { UpstreamCaller } from './upstream/index.js';

export interface ToolsCommandInput {
  config: string | undefined;
  /** Whose curation to show (an endpoint's tenants may have their own); default: the endpoint's own. */
  tenant: string | undefined;
  json: boolean;
}

interface Output {
  write(s: string): unknown;
}

interface Row {
  name: string;
  upstream: string;
  tool: string;
  canonical: string;
  how: 'as is' | 'renamed' | 'shortened';
}

/**
 * What the command starts: the config's upstreams, without anything a running gateway shares with its
 * replicas (no Redis: no heartbeat, no pins recorded) and without tool pinning (it would record first
 * sightings). Only names are read; no tool is called.
 */
function offline(config: Config): Config {
  return { ...config, store: {}, pinning: { ...config.pinning, mode: 'off', file: undefined }, upstreams: config.upstreams.map((u) => ({ ...u, pinning: 'off' as const })) } as Config;
}

function rowsOf(view: ToolView, curation: Curation): Row[] {
  return view.tools.map((t) => ({
    name: t.name,
    upstream: t.upstream,
    tool: t.tool,
    canonical: t.canonical,
    how: curation.renameOf(t.canonical) !== undefined ? 'renamed' : t.name === t.canonical ? 'as is' : 'shortened',
  }));
}

/** A caller for the command's own session on each endpoint: upstream requests to a client are refused. */
function commandCaller(tenant: string): UpstreamCaller {
  return { id: 'switchboard-tools', tenant, clientRequest: async () => Promise.reject(new Error('no client')), clientNotify: () => {} };
}

/**
 * `switchboard tools`: starts the upstreams of a config, and prints for each endpoint the tool names
 * clients see and the upstream tool each one reaches (renamed and shortened names marked).
 */
export async function toolsCommand(input: ToolsCommandInput, out: Output = process.stdout, err: Output = process.stderr): Promise<number> {
  if (!input.config) {
    err.write('switchboard tools: --config FILE is required\n');
    return 2;
  }
  const config = offline(loadConfig(input.config));
  const logger = createLogger('error', { write: (line: string) => void err.write(line) });
  const gateway = new Gateway(config, { logger });
  const report: Array<{ endpoint: string; exposure: string; tools: Row[] }> = [];
  try {
    await gateway.start();
    for (const router of gateway.routers) {
      // No tenant is named "": without --tenant, the endpoint's own curation.
      const session = await router.open(commandCaller(input.tenant ?? ''));
      try {
        report.push({ endpoint: router.config.path, exposure: router.tools.exposure, tools: rowsOf(await session.toolView(), session.curation) });
      } finally {
        await session.close();
      }
    }
  } finally {
    await gateway.stop();
  }
  if (input.json) {
    out.write(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  for (const e of report) {
    out.write(`${e.endpoint} (exposure ${e.exposure}${e.exposure === 'all' ? '' : ': tools/list shows search_tools and call_tool'})\n`);
    const width = Math.max(0, ...e.tools.map((t) => t.name.length));
    for (const t of e.tools) out.write(`  ${t.name.padEnd(width)}  ${t.upstream}/${t.tool}${t.how === 'as is' ? '' : `  (${t.how})`}\n`);
  }
  return 0;
}
