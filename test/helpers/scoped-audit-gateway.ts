// A gateway in front of the conformance stdio server with JWT auth (a static key) and the audit log on,
// whose tenant may call the elicitation tool only with scope "ask": for the suites on how a refusal for a
// missing scope is audited. Its log lines are kept for the suite to read.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURE, startGateway, type RunningGateway } from './gateway.js';
import type { Json } from './http-edge.js';
import { ISSUER, PUBLIC_URL, makeKey, signToken } from './tokens.js';

export interface ScopedAuditGateway {
  gw: RunningGateway;
  /** A token of the gateway's audience with `scope` (and `sub`, when given). */
  token(scope: string, sub?: string): Promise<string>;
  /** The audit lines logged so far. */
  audited(): Json[];
  close(): Promise<void>;
}

export async function startScopedAuditGateway(): Promise<ScopedAuditGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'swb-scope-audit-'));
  const key = await makeKey('k1');
  writeFileSync(join(dir, 'key.pem'), key.spki);
  const logLines: string[] = [];
  const gw = await startGateway(
    {
      server: { publicUrl: PUBLIC_URL },
      audit: { enabled: true },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [join(dir, 'key.pem')] },
      tenants: [{ name: 'acme', endpoints: ['/mcp'], tools: { allow: [{ match: 'fx__test_elicitation', scopes: ['ask'] }, 'fx__*'] } }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    },
    { logLines },
  ).catch((e: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  });
  return {
    gw,
    token: (scope, sub) => signToken(key, { aud: PUBLIC_URL, kid: null, scope, ...(sub === undefined ? {} : { sub }) }),
    audited: () => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit'),
    close: async () => {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
