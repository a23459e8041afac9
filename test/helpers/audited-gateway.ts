// What the suites reading the audit log stand on: a gateway with the audit on, in front of the conformance stdio
// server ("fx", on /mcp), auth off (tenant "anonymous"), that keeps its log lines for the test to read.
import { FIXTURE, startGateway, type RunningGateway } from './gateway.js';
import type { Json } from './http-edge.js';

export interface AuditedGateway {
  gw: RunningGateway;
  logLines: string[];
  /** The audit lines logged so far, parsed. */
  audited(): Json[];
}

/** `upstream` adds to fx's config (shared unless it says: its sharing, pool), `tenant` to anonymous's (its limits, tools). */
export async function startAuditedGateway(o: { upstream?: Record<string, unknown>; tenant?: Record<string, unknown> } = {}): Promise<AuditedGateway> {
  const logLines: string[] = [];
  const gw = await startGateway(
    {
      audit: { enabled: true },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', ...o.upstream } as never],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], ...o.tenant }],
    },
    { logLines },
  );
  const audited = (): Json[] => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit');
  return { gw, logLines, audited };
}
