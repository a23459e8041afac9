import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The peer gateways are installed on demand into a scratch folder, never as project dependencies, and
 * at pinned versions so that two runs compare against the same code.
 */
export const PEER_VERSIONS = { supergateway: '4.0.0', 'mcp-proxy': '6.7.19' } as const;

export interface Peers {
  supergateway: string;
  mcpProxy: string;
  versions: Record<string, string>;
}

function installedVersion(dir: string, name: string): string | undefined {
  const file = join(dir, 'node_modules', name, 'package.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

export function ensurePeers(dir: string, log: (s: string) => void): Peers {
  mkdirSync(dir, { recursive: true });
  const missing = Object.entries(PEER_VERSIONS).filter(([name, v]) => installedVersion(dir, name) !== v);
  if (missing.length > 0) {
    if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{"name":"switchboard-bench-peers","private":true}\n');
    const specs = missing.map(([name, v]) => `${name}@${v}`);
    log(`installing peers into ${dir}: ${specs.join(' ')}`);
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--loglevel', 'error', ...specs], { stdio: 'inherit' });
  }
  return {
    supergateway: join(dir, 'node_modules/supergateway/dist/index.js'),
    mcpProxy: join(dir, 'node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs'),
    versions: Object.fromEntries(Object.keys(PEER_VERSIONS).map((n) => [n, installedVersion(dir, n) ?? '?'])),
  };
}
