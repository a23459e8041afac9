// Takeovers caught half-way: gateways that share sessions through a test redis-server, each fronting the
// gated fixture server (test/fixtures/gated-server.mjs) on a shared pool, which holds resources/subscribe
// until its gate file exists. A session subscribed on one gateway and handed over by its shutdown is then
// asked for on another, whose rebuild of the session waits at the renewal of that subscription upstream:
// the test acts on the store or the session there, then lets the rebuild go on.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startGateway, type RunningGateway } from './gateway.js';
import { openSession, post, type Session } from './http-edge.js';
import { until } from './wait.js';

const GATED = join(import.meta.dirname, '..', 'fixtures', 'gated-server.mjs');

export interface HeldTakeover {
  /** The gateway taking the session over, its rebuild held. */
  b: RunningGateway;
  s: Session;
  /** The answer to the request that made `b` take the session over (a tools/list). */
  answer: Promise<Response>;
  /** Lets `b`'s upstream answer the renewal: the rebuild goes on. */
  release(): void;
}

export class GatedReplicas {
  readonly #redisUrl: string;
  readonly #prefix: string;
  readonly #dir = mkdtempSync(join(tmpdir(), 'swb-held-takeover-'));
  readonly #gateways: RunningGateway[] = [];
  readonly #gates: string[] = [];
  readonly raw: Redis;

  constructor(redisUrl: string, prefix: string) {
    this.#redisUrl = redisUrl;
    this.#prefix = prefix;
    this.raw = new Redis(redisUrl);
  }

  /** A gateway of the group; `held`: its upstream holds resources/subscribe until the returned gate opens. */
  async start(held = false, logLines?: string[]): Promise<{ gw: RunningGateway; gate: string }> {
    const gate = join(this.#dir, `gate-${this.#gates.length}`);
    this.#gates.push(gate);
    if (!held) writeFileSync(gate, '');
    const gw = await startGateway(
      {
        store: { redis: { url: this.#redisUrl, keyPrefix: this.#prefix, heartbeatMs: 200, replicaTtlMs: 1000 } },
        admin: { enabled: true, port: 0 },
        upstreams: [{ name: 'gated', transport: 'stdio', command: process.execPath, args: [GATED, '--gate', gate, '--hold', 'resources/subscribe'], sandbox: 'none', sharing: 'shared' }],
        endpoints: [{ path: '/mcp', upstreams: ['gated'] }],
      },
      { logLines },
    );
    this.#gateways.push(gw);
    return { gw, gate };
  }

  /** A session subscribed on a gateway that then shuts down, asked for on a new one (`b`) whose rebuild is held. */
  async heldTakeover(logLines?: string[]): Promise<HeldTakeover> {
    const { gw: a } = await this.start();
    const { gw: b, gate } = await this.start(true, logLines);
    const s = await openSession(a);
    const sub = await post(a, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: 'gated://watched' } }, { sid: s.sid, version: s.version });
    if (sub.status !== 200) throw new Error(`resources/subscribe: HTTP ${sub.status} ${await sub.text()}`);
    await until('the subscription is in the session record', async () => ((await this.raw.get(`${this.#prefix}session:${s.sid}`)) ?? '').includes('gated://watched'));
    await a.close(); // hands its sessions over: the next request anywhere takes this one over
    const answer = post(b, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { sid: s.sid, version: s.version });
    await until('b renews the subscription upstream', () => existsSync(`${gate}.asked`));
    return { b, s, answer, release: () => writeFileSync(gate, '') };
  }

  async close(): Promise<void> {
    for (const gate of this.#gates) if (!existsSync(gate)) writeFileSync(gate, '');
    for (const gw of this.#gateways.reverse()) await gw.close().catch(() => {});
    this.raw.disconnect();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
