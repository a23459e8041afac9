import { startGateway } from './gateway.js';
import { startJsonRemote } from './json-remote.js';

/** What the remote answers a request with an id: its result, from the method and params. */
export type RemoteAnswer = (method: string, params: Record<string, unknown> | undefined) => Record<string, unknown>;

export interface LoggedRemote {
  /** The gateway's log lines, as written. */
  lines: string[];
  /** Closes the gateway, then the remote. */
  close(): Promise<void>;
}

/**
 * Builds a remote MCP server (startJsonRemote, answering with `answer`) and a gateway logging into `lines`
 * with it as its one shared legacy upstream "remote" at /mcp, health checks off: for tests of what the
 * gateway logs about what an upstream sends.
 */
export async function startLoggedRemote(answer: RemoteAnswer): Promise<LoggedRemote> {
  const { url, close } = await startJsonRemote(answer);
  const lines: string[] = [];
  const gw = await startGateway(
    {
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'remote', transport: 'streamable-http', url, sharing: 'shared', era: 'legacy', healthCheck: { intervalMs: 0 } }],
      endpoints: [{ path: '/mcp', upstreams: ['remote'] }],
    },
    { logLines: lines },
  ).catch((err: unknown) => {
    close();
    throw err;
  });
  return {
    lines,
    close: async () => {
      await gw.close();
      close();
    },
  };
}
