import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { textOf } from '../helpers/sdk.js';
import type { ClientKind, Ledger } from './ledger.js';
import type { SoakReplica } from './soak-cluster.js';

/** What a verifier needs of a client, SDK v1 (2025 sessions) or v2 (pinned to 2026-07-28) alike. */
interface SoakClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }, schema?: undefined, options?: { timeout?: number; signal?: AbortSignal }): Promise<unknown>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
}

/** An answer slower than this is lost (the SDK's own request timeout). */
const LOST_AFTER_MS = 20_000;

/**
 * A fetch like a load balancer's: each request to the next live replica. A connection refused (nothing
 * sent) moves on to the next one; any other failure is the caller's, never retried here — a retried POST
 * would hide a call that failed in flight.
 */
export function balancedFetch(live: () => SoakReplica[], only?: (method: string) => boolean): typeof fetch {
  let i = Math.floor(Math.random() * 100);
  return (async (url: string | URL | Request, init?: RequestInit) => {
    const u = new URL(url instanceof Request ? url.url : url);
    if (only && !only(init?.method ?? 'GET')) return fetch(u, init);
    let last: unknown;
    for (let attempt = 0; attempt < 4; attempt++) {
      const replicas = live();
      if (replicas.length === 0) break;
      u.host = new URL(replicas[i++ % replicas.length]!.base).host;
      try {
        return await fetch(u, init);
      } catch (err) {
        last = err;
        if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNREFUSED') throw err;
      }
    }
    throw last ?? new Error('no live replica');
  }) as typeof fetch;
}

/**
 * One verifier: a client of one kind sending echo calls with a nonce of its own, each answer checked
 * (right, another call's answer = crossed, an error = failed, no answer = lost), until `deadline`. A client
 * whose session is gone (a per-session upstream or an SSE stream that died with its replica) starts a new
 * session before its next call, as a real client does on 404.
 */
export class Verifier {
  readonly #kind: ClientKind;
  readonly #live: () => SoakReplica[];
  readonly #ledger: Ledger;
  #client: SoakClient | undefined;
  #broken = false;
  reconnects = 0;

  constructor(kind: ClientKind, live: () => SoakReplica[], ledger: Ledger) {
    this.#kind = kind;
    this.#live = live;
    this.#ledger = ledger;
  }

  async run(deadline: number, maxCalls: number): Promise<void> {
    for (let n = 0; n < maxCalls && Date.now() < deadline; n++) {
      if (!(await this.#ensureClient(deadline))) break;
      await this.#callOnce();
      await sleep(40 + Math.random() * 80);
    }
    await this.close();
  }

  async close(): Promise<void> {
    await this.#client?.close().catch(() => {});
    this.#client = undefined;
  }

  /** Drops a call mid-flight (the client's stream goes away), then checks the session still answers. */
  async dropMidCall(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    const ac = new AbortController();
    const call = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 2 } }, undefined, { signal: ac.signal }).catch(() => undefined);
    await sleep(300);
    ac.abort();
    await call;
  }

  async #ensureClient(deadline: number): Promise<boolean> {
    while (!this.#client || this.#broken) {
      if (Date.now() >= deadline) return false;
      if (this.#client) this.reconnects++;
      await this.close();
      this.#broken = false;
      try {
        this.#client = await this.#connect();
      } catch {
        this.#client = undefined;
        await sleep(250);
      }
    }
    return true;
  }

  async #connect(): Promise<SoakClient> {
    const first = this.#live()[Math.floor(Math.random() * this.#live().length)]!;
    if (this.#kind === 'modern/shared') {
      // No session: every request stands alone, and each goes to the next live replica.
      const modern = new ModernClient({ name: 'soak-modern', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await modern.connect(new ModernTransport(new URL('/mcp', first.base), { fetch: balancedFetch(this.#live) }));
      // SDK v2 takes the request options second (v1 a result schema, then the options).
      return {
        callTool: (params, _schema, options) => modern.callTool(params, options),
        close: () => modern.close(),
      };
    }
    const client = new Client({ name: `soak-${this.#kind}`, version: '1' });
    if (this.#kind === 'sse/shared') {
      // The stream on one replica, each POST to the next live one.
      await client.connect(new SSEClientTransport(new URL('/sse', first.base), { fetch: balancedFetch(this.#live, (m) => m === 'POST') }));
    } else {
      const path = this.#kind === 'streamable/shared' ? '/mcp' : '/own';
      await client.connect(new StreamableHTTPClientTransport(new URL(path, first.base), { fetch: balancedFetch(this.#live) }));
    }
    client.onclose = () => {
      if (this.#client === client) this.#broken = true;
    };
    return client;
  }

  async #callOnce(): Promise<void> {
    const nonce = randomUUID();
    const sentAt = Date.now();
    try {
      const text = textOf((await this.#client!.callTool({ name: 'echo', arguments: { message: nonce } }, undefined, { timeout: LOST_AFTER_MS })) as Parameters<typeof textOf>[0]);
      this.#ledger.call({ kind: this.#kind, sentAt, endedAt: Date.now(), outcome: text === `Echo: ${nonce}` ? 'correct' : 'crossed', error: text });
    } catch (err) {
      const message = (err as Error).message;
      const lost = /timed out|Request timeout/i.test(message);
      this.#ledger.call({ kind: this.#kind, sentAt, endedAt: Date.now(), outcome: lost ? 'lost' : 'failed', error: message });
      // A session that is gone is started again (404), as is any SSE session (its stream may be gone).
      if (/404|not found/i.test(message) || this.#kind === 'sse/shared') this.#broken = true;
    }
  }
}
