// A gateway a describe's tests share, with an official SDK client on each of its endpoints: for suites
// that compare endpoints of one upstream configured differently (one endpoint per guardrail action).
import { after, before } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from './gateway.js';
import { connectClient } from './sdk.js';

/**
 * For a describe: a gateway with `input`'s upstreams and endpoints, its log lines kept in `lines`, and a
 * client (Streamable HTTP) connected to each endpoint, in `clients` by path. Started before the
 * describe's tests (`gw` is set then) and closed after them, the clients first.
 */
export function gatewayWithClients(input: Parameters<typeof startGateway>[0]): { gw: RunningGateway; lines: string[]; clients: Record<string, Client> } {
  const rig = { gw: undefined as unknown as RunningGateway, lines: [] as string[], clients: {} as Record<string, Client> };
  before(async () => {
    rig.gw = await startGateway(input, { logLines: rig.lines });
    for (const { path } of input.endpoints) rig.clients[path] = await connectClient(rig.gw, 'streamable-http', { path });
  });
  after(async () => {
    for (const c of Object.values(rig.clients)) await c.close();
    await rig.gw?.close();
  });
  return rig;
}
