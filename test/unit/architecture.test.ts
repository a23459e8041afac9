// The one-way data flow of ARCHITECTURE.md, enforced: each folder of src/ may import only the folders
// listed for it, and only edge/ (with app.ts) knows Fastify. A new arrow is a design decision: add it
// here, in the same commit, with the reason.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const SRC = join(import.meta.dirname, '..', '..', 'src');

const ALLOWED: Record<string, string[]> = {
  config: [],
  jsonrpc: [],
  observability: [],
  transport: ['jsonrpc'],
  auth: ['config', 'errors', 'jsonrpc', 'observability'],
  sandbox: ['config', 'errors'],
  upstream: ['config', 'errors', 'jsonrpc', 'observability', 'sandbox', 'transport'],
  policy: ['auth', 'config', 'errors', 'jsonrpc', 'observability'],
  // The router applies pins (policy) to what upstreams list.
  router: ['config', 'errors', 'jsonrpc', 'observability', 'policy', 'upstream'],
  session: ['auth', 'config', 'errors', 'jsonrpc', 'observability', 'policy', 'router', 'transport'],
  // Redis-backed stores implement session and policy interfaces.
  cluster: ['auth', 'config', 'errors', 'jsonrpc', 'observability', 'policy', 'session', 'transport'],
  edge: ['auth', 'cluster', 'config', 'errors', 'jsonrpc', 'observability', 'policy', 'router', 'session', 'transport'],
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\s)(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/gm)].map((m) => (m[1] ?? m[2])!);
}

describe('architecture', () => {
  it('every folder of src/ has a rule', () => {
    const folders = readdirSync(SRC).filter((d) => statSync(join(SRC, d)).isDirectory());
    assert.deepEqual(folders.filter((d) => !(d in ALLOWED)), []);
  });

  it('no folder imports against the flow', () => {
    const violations: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(SRC, file);
      const folder = rel.includes('/') ? rel.split('/')[0]! : undefined;
      for (const spec of imports(file)) {
        if (spec === 'fastify' || spec.startsWith('@fastify/')) {
          if (folder !== 'edge' && folder !== undefined) violations.push(`${rel} imports ${spec} (only edge/ may)`);
          continue;
        }
        if (!spec.startsWith('.') || folder === undefined) continue;
        const target = relative(SRC, join(file, '..', spec));
        const targetFolder = target.includes('/') ? target.split('/')[0]! : target.replace(/\.js$/, '');
        if (targetFolder === folder) continue;
        if (!ALLOWED[folder]!.includes(targetFolder)) violations.push(`${rel} imports ${spec}`);
      }
    }
    assert.deepEqual(violations, []);
  });
});
