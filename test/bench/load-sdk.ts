import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { BenchSession } from './load.js';
import type { Access } from './targets.js';

/** Per-call limit: a target that hangs must not hold a bounded phase open for the SDK's default minute. */
const CALL_TIMEOUT_MS = 10_000;

/**
 * The SDK clients (v1 and v2) hand every fetch of a session the same AbortSignal, so that close()
 * aborts them all; undici's Request hangs an abort listener on that signal and lets go of it only when
 * the Request is garbage-collected. Under load thousands pile up between collections, and Node prints
 * "MaxListenersExceededWarning: … 1501 abort listeners added to [AbortSignal]" for every session that
 * gets there. Each POST or DELETE here gets a signal of its own instead, which the session's signal
 * aborts through one listener per session and a set that holds the request only until its answer's
 * headers are in (JSON bodies are read at once; an SSE answer's stream is ended by the server after
 * the response, and the bench closes sessions only when nothing is in flight). A GET is the session's
 * one standing stream: it keeps the session's signal, so close() still ends it.
 */
const inFlight = new WeakMap<AbortSignal, Set<AbortController>>();

function ownSignal(session: AbortSignal): { signal: AbortSignal; release(): void } {
  let live = inFlight.get(session);
  if (!live) {
    const set = new Set<AbortController>();
    inFlight.set(session, (live = set));
    session.addEventListener('abort', () => {
      for (const c of set) c.abort(session.reason);
      set.clear();
    }, { once: true });
  }
  const own = new AbortController();
  if (session.aborted) own.abort(session.reason);
  else live.add(own);
  return { signal: own.signal, release: () => void live.delete(own) };
}

export async function benchFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  const session = init?.signal;
  if (!session || init.method === undefined || init.method === 'GET') return fetch(url, init);
  const own = ownSignal(session);
  try {
    return await fetch(url, { ...init, signal: own.signal });
  } finally {
    own.release();
  }
}

function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}

/**
 * A session of the official SDK client (what real agents run), over whichever transport the target
 * speaks. For stdio this spawns the upstream itself: the direct floor.
 */
export async function openSdkSession(access: Access): Promise<BenchSession> {
  if (access.kind === 'modern') return openModernSdkSession(access.url);
  const client = new Client({ name: 'switchboard-bench', version: '1.0.0' }, { capabilities: {} });
  let terminate: (() => Promise<void>) | undefined;
  switch (access.kind) {
    case 'stdio':
      await client.connect(new StdioClientTransport({ command: access.command, args: access.args, stderr: 'ignore' }), { timeout: CALL_TIMEOUT_MS });
      break;
    case 'streamable': {
      const transport = new StreamableHTTPClientTransport(new URL(access.url), { fetch: benchFetch, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
      await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
      // The SDK's close() leaves the session on the server; DELETE it so the gateway can free it.
      terminate = () => transport.terminateSession();
      break;
    }
    case 'sse':
      await client.connect(new SSEClientTransport(new URL(access.url), { fetch: benchFetch }), { timeout: CALL_TIMEOUT_MS });
      break;
  }
  client.onerror = () => {}; // stray responses and stream ends are counted by the raw client, not here
  return {
    async call(message: string): Promise<string> {
      const result = await client.callTool({ name: 'echo', arguments: { message } }, undefined, { timeout: CALL_TIMEOUT_MS });
      return textOf(result);
    },
    async close(): Promise<void> {
      await terminate?.().catch(() => {});
      await client.close();
    },
  };
}

/**
 * The SDK v2 client pinned to 2026-07-28 (SDK 1.x speaks the 2025 era only): connect() is its
 * server/discover probe, every call a stateless POST; there is no session to terminate.
 */
async function openModernSdkSession(url: string): Promise<BenchSession> {
  const client = new ModernClient({ name: 'switchboard-bench', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(new URL(url), { fetch: benchFetch }), { timeout: CALL_TIMEOUT_MS });
  client.onerror = () => {};
  return {
    async call(message: string): Promise<string> {
      return textOf(await client.callTool({ name: 'echo', arguments: { message } }, { timeout: CALL_TIMEOUT_MS }));
    },
    close: () => client.close(),
  };
}
