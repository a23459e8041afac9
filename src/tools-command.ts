import { loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { Gateway } from './gateway.js';
import { createLogger } from './observability/logger.js';
import { terminalJson, terminalLine, terminalText as shown } from './observability/terminal-text.js';
import type { Curation } from './router/curation.js';
import type { EndpointRouter } from './router/endpoint-router.js';
import { splitPrefixed } from './router/names.js';
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
 * A tool of the endpoint's curated view that clients are not shown at all: its name is taken by a rename or
 * a search meta-tool (a rename wins over a tool's own name), or breaks the MCP name rule. Only the running
 * gateway's warnings said so, and the command prints errors only: it listed the mapping without a word of them.
 */
interface LeftOut {
  upstream: string;
  tool: string;
  canonical: string;
  why: 'name taken' | 'name rule';
}

const LEFT_OUT_WHY: Record<LeftOut['why'], string> = { 'name taken': 'its name is taken by a rename or a search meta-tool', 'name rule': 'its name breaks the MCP name rule' };

function leftOutOf(router: EndpointRouter, view: ToolView): LeftOut[] {
  // Shown as upstream/tool, as the exposed names are: a canonical name alone may be another tool's exposed one.
  const row = (canonical: string, why: LeftOut['why']): LeftOut => {
    const own = router.prefixNames ? splitPrefixed(canonical) : undefined;
    return { upstream: own?.upstream ?? router.pools[0]!.name, tool: own?.name ?? canonical, canonical, why };
  };
  return [...view.shadowed.map((c) => row(c, 'name taken')), ...view.misnamed.map((c) => row(c, 'name rule'))];
}

/** An upstream of an endpoint whose tools could not be listed: it did not start, or its tools/list failed. */
interface Failure {
  upstream: string;
  error: string;
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

/** The endpoint's upstreams absent from the view (an upstream known to have no tools is not missing). */
function failuresOf(router: EndpointRouter, view: ToolView): Failure[] {
  return router.pools
    .filter((p) => !view.catalogues.has(p.name) && (!p.identity || p.identity.capabilities.tools !== undefined))
    .map((p) => ({ upstream: p.name, error: [...p.instances].find((i) => i.lastFailure)?.lastFailure ?? 'its tools could not be listed' }));
}

/** The tenants a request can be made as: the config's, and "anonymous" with auth off. */
function tenantsOf(config: Config): string[] {
  const names = config.tenants.map((t) => t.name);
  return config.auth.mode === 'none' && !names.includes('anonymous') ? [...names, 'anonymous'] : names;
}

/** A caller for the command's own session on each endpoint: upstream requests to a client are refused. */
function commandCaller(tenant: string): UpstreamCaller {
  return { id: 'switchboard-tools', tenant, clientRequest: async () => Promise.reject(new Error('no client')), clientNotify: () => {} };
}

/** The exit code of a process ended by the signal (128 + its number), which the command still exits with. */
const SIGNAL_EXIT = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Ctrl-C, a SIGTERM or a closed terminal (SIGHUP) while the upstreams start or list their tools: they are stopped before the command
 * exits. Each runs in a process group of its own, which the terminal's signal never reaches: the command
 * died alone and left them running (one that outlives its stdin's end for good). A second signal exits at once.
 * Returns the function that removes the handlers.
 */
function stopOnSignal(gateway: Gateway, err: Output): () => void {
  let stopping = false;
  const on = (signal: keyof typeof SIGNAL_EXIT): void => {
    if (stopping) process.exit(SIGNAL_EXIT[signal]);
    stopping = true;
    err.write(`switchboard tools: ${signal}: stopping the upstreams\n`);
    void gateway.stop().finally(() => process.exit(SIGNAL_EXIT[signal]));
  };
  const handlers = (Object.keys(SIGNAL_EXIT) as Array<keyof typeof SIGNAL_EXIT>).map((signal) => [signal, () => on(signal)] as const);
  for (const [signal, h] of handlers) process.on(signal, h);
  return () => {
    for (const [signal, h] of handlers) process.off(signal, h);
  };
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
  const tenants = tenantsOf(config);
  if (input.tenant !== undefined && !tenants.includes(input.tenant)) {
    err.write(`switchboard tools: no tenant ${JSON.stringify(input.tenant)} in ${input.config} (tenants: ${tenants.join(', ') || 'none'})\n`);
    return 2;
  }
  const logger = createLogger('error', { write: (line: string) => void err.write(line) });
  const gateway = new Gateway(config, { logger });
  const report: Array<{ endpoint: string; exposure: string; tools: Row[]; leftOut: LeftOut[]; failed: Failure[] }> = [];
  const unhandle = stopOnSignal(gateway, err);
  try {
    await gateway.start();
    for (const router of gateway.routers) {
      // No tenant is named "": without --tenant, the endpoint's own curation.
      const session = await router.open(commandCaller(input.tenant ?? ''));
      try {
        const view = await session.toolView();
        report.push({ endpoint: router.config.path, exposure: router.tools.exposure, tools: rowsOf(view, session.curation), leftOut: leftOutOf(router, view), failed: failuresOf(router, view) });
      } finally {
        await session.close();
      }
    }
  } finally {
    await gateway.stop();
    unhandle();
  }
  // Exit 1 when an upstream's tools are missing: the listing is then not what clients will see.
  const failed = report.flatMap((e) => e.failed.map((f) => `switchboard tools: ${e.endpoint}: upstream "${f.upstream}" failed, its tools are not listed: ${terminalLine(f.error)}\n`));
  if (input.json) {
    out.write(`${terminalJson(JSON.stringify(report, null, 2))}\n`);
  } else {
    for (const e of report) {
      out.write(`${e.endpoint} (exposure ${e.exposure}${e.exposure === 'all' ? '' : ': tools/list shows search_tools and call_tool'})\n`);
      // Tool names come from upstreams: printed escaped (terminal-text.ts).
      const width = Math.max(0, ...e.tools.map((t) => shown(t.name).length));
      for (const t of e.tools) out.write(`  ${shown(t.name).padEnd(width)}  ${t.upstream}/${shown(t.tool)}${t.how === 'as is' ? '' : `  (${t.how})`}\n`);
      for (const l of e.leftOut) out.write(`  left out: ${l.upstream}/${shown(l.tool)} (${LEFT_OUT_WHY[l.why]})\n`);
    }
  }
  for (const line of failed) err.write(line);
  return failed.length > 0 ? 1 : 0;
}
