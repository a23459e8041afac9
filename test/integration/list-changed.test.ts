// list_changed after an upstream restart, as a real SDK client hears it. A restarted server-everything
// used to reach a client as a burst: the gateway's own "it restarted" for each list kind, then one
// tools/list_changed per tool the process registers once initialized (five tools/list_changed in all).
// Each session now hears one of each kind, and what it lists then is whole. Per-session (the quick
// start's mode: the client's own process) and shared (two clients, one process).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LIST_CHANGED_WINDOW_MS } from '../../src/session/list-changed-coalescer.js';
import type { UpstreamInstance } from '../../src/upstream/index.js';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const KINDS = ['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed'];

/** An SDK client (sampling, elicitation, roots: what makes server-everything register its extra tools) counting list_changed by kind. */
async function countingClient(gw: RunningGateway): Promise<{ client: Client; counts: Map<string, number> }> {
  const client = new Client({ name: 'counter', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} } });
  const counts = new Map<string, number>();
  client.fallbackNotificationHandler = async (n) => void counts.set(n.method, (counts.get(n.method) ?? 0) + 1);
  await client.connect(new StreamableHTTPClientTransport(gw.url()));
  return { client, counts };
}

/** Kills an instance's process group (a crash) and waits for it to be back. */
async function crash(inst: UpstreamInstance): Promise<void> {
  const pid = inst.pid;
  assert.ok(pid, 'a running process');
  const back = new Promise<void>((resolve) => inst.once('ready', () => resolve()));
  process.kill(-pid, 'SIGKILL');
  await back;
}

/** Once each kind was heard and the client lists the tools the process registers after initialize, the burst is over; a window later nothing more may come. */
async function afterBurst(client: Client, counts: Map<string, number>): Promise<void> {
  await until('one list_changed of each kind', () => KINDS.every((k) => (counts.get(k) ?? 0) >= 1));
  await until('the restarted process lists its extra tools', async () => (await client.listTools()).tools.some((t) => t.name === 'trigger-sampling-request'));
  // Absence cannot be awaited: any window the burst opened has closed after twice its length.
  await sleep(2 * LIST_CHANGED_WINDOW_MS);
}

/**
 * One of each kind; tools/list_changed may come twice. A window stays open at most LIST_CHANGED_MAX_MS
 * (1 s) from the gateway's own "it restarted": on a loaded machine (CI runs suites side by side) the
 * restarted process may register its extra tools after that, and they are announced once more, which is
 * the coalescer's design (a steady stream cannot hold a window open). Without it the burst is five or six.
 */
function assertFolded(counts: Map<string, number>): void {
  const tools = counts.get(KINDS[0]!) ?? 0;
  assert.ok(tools === 1 || tools === 2, `tools/list_changed heard ${tools} times`);
  assert.deepEqual(Object.fromEntries(counts), { ...Object.fromEntries(KINDS.map((k) => [k, 1])), [KINDS[0]!]: tools });
}

describe('list_changed after an upstream restart: one of each kind per session', { timeout: 60_000 }, () => {
  const gws: RunningGateway[] = [];
  const clients: Client[] = [];
  after(async () => {
    for (const c of clients) await c.close();
    for (const gw of gws) await gw.close();
  });

  it('per-session: the client\'s own process restarted', async () => {
    const gw = await startGateway({ upstreams: [everythingUpstream('everything', 'per-session')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
    gws.push(gw);
    const { client, counts } = await countingClient(gw);
    clients.push(client);
    await client.listTools();
    counts.clear();
    const mine = [...gw.app.gateway.pools.get('everything')!.instances].find((i) => i.dedicatedTo !== undefined)!;
    await crash(mine);
    await afterBurst(client, counts);
    assertFolded(counts);
  });

  it('shared: two clients of one restarted process each hear one of each kind', async () => {
    const gw = await startGateway({ upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] });
    gws.push(gw);
    const a = await countingClient(gw);
    const b = await countingClient(gw);
    clients.push(a.client, b.client);
    a.counts.clear();
    b.counts.clear();
    await crash([...gw.app.gateway.pools.get('everything')!.instances][0]!);
    for (const { client, counts } of [a, b]) {
      await afterBurst(client, counts);
      assertFolded(counts);
    }
  });
});
