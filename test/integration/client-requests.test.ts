// Sampling and elicitation, server-everything's headline tools, with two clients at once. On the quick
// start itself (deploy/quickstart.yaml: per-session, a warm spare) each of two official SDK clients
// completes a sampling round and an elicitation round while the other one's own round is held open, and
// each answer reaches its own client. Against a shared server-everything the same second round cannot
// be attributed: refused with -32603, and the operator is told (a warning naming upstream, method and
// the fix; a metric).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { buildApp, type App } from '../../src/app.js';
import { signDevToken } from '../../src/auth/dev-token.js';
import { loadConfig } from '../../src/config/load.js';
import { audiencesOf } from '../../src/edge-auth.js';
import { createLogger } from '../../src/observability/logger.js';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

/** A promise the test resolves when it chooses: a client's answer held back while the other works. */
function gate(): { open(): void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * An SDK client whose sampling and elicitation answers name it, and which can hold its next answer
 * (`hold`): until the returned gate opens, that round stays in flight, and the client busy.
 */
class NamedClient {
  readonly client: Client;
  readonly #name: string;
  #held: { kind: 'sampling' | 'elicitation'; gate: ReturnType<typeof gate>; reached: ReturnType<typeof gate> } | undefined;

  constructor(name: string) {
    this.#name = name;
    this.client = new Client({ name, version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } });
    this.client.setRequestHandler(CreateMessageRequestSchema, async () => {
      await this.#wait('sampling');
      return { model: `model-of-${this.#name}`, role: 'assistant', content: { type: 'text', text: `sampled by ${this.#name}` } };
    });
    this.client.setRequestHandler(ElicitRequestSchema, async () => {
      await this.#wait('elicitation');
      return { action: 'accept', content: { name: `user-of-${this.#name}`, check: true } };
    });
  }

  async connect(url: URL, token: string): Promise<void> {
    await this.client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  }

  /** The next round of `kind` waits for the gate; resolves once that round has reached this client. */
  hold(kind: 'sampling' | 'elicitation'): { reached: Promise<void>; release(): void } {
    const held = { kind, gate: gate(), reached: gate() };
    this.#held = held;
    return { reached: held.reached.opened, release: held.gate.open };
  }

  async #wait(kind: 'sampling' | 'elicitation'): Promise<void> {
    const held = this.#held;
    if (held?.kind !== kind) return;
    this.#held = undefined;
    held.reached.open();
    await held.gate.opened;
  }

  sample(): Promise<string> {
    return this.client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: `from ${this.#name}`, maxTokens: 10 } }).then(textOf);
  }

  elicit(): Promise<string> {
    return this.client.callTool({ name: 'trigger-elicitation-request', arguments: {} }).then(textOf);
  }
}

/** One client's round held open (it is busy) while the other completes both rounds; then the held one completes. */
async function roundsWhileOtherBusy(busy: NamedClient, busyName: string, other: NamedClient, otherName: string, heldKind: 'sampling' | 'elicitation'): Promise<void> {
  const hold = busy.hold(heldKind);
  const busyCall = heldKind === 'sampling' ? busy.sample() : busy.elicit();
  await hold.reached;
  assert.match(await other.sample(), new RegExp(`model-of-${otherName}[\\s\\S]*sampled by ${otherName}`), `${otherName}'s sampling reached ${otherName}`);
  assert.match(await other.elicit(), new RegExp(`user-of-${otherName}`), `${otherName}'s elicitation reached ${otherName}`);
  hold.release();
  const held = await busyCall;
  assert.match(held, new RegExp(heldKind === 'sampling' ? `sampled by ${busyName}` : `user-of-${busyName}`), `${busyName}'s held round completed with its own answer`);
}

describe('sampling and elicitation with two clients busy at once', { timeout: 90_000 }, () => {
  describe('the quick start (deploy/quickstart.yaml)', () => {
    let app: App;
    let base: string;
    let token: (sub: string) => Promise<string>;
    const clients: NamedClient[] = [];

    before(async () => {
      const file = join(import.meta.dirname, '..', '..', 'deploy', 'quickstart.yaml');
      const config = loadConfig(file, { ...process.env, SWITCHBOARD_PORT: '0', SWITCHBOARD_METRICS_PORT: '0' });
      app = await buildApp(config, { logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
      base = (await app.listen()).replace('localhost', '127.0.0.1');
      token = (sub: string) =>
        signDevToken({
          keyFile: join(import.meta.dirname, '..', '..', 'deploy', 'dev-keys', 'dev-private.jwk.json'),
          issuer: config.auth.issuer!,
          audience: audiencesOf(config)[0]!,
          tenant: 'dev',
          subject: sub,
          scopes: [],
          ttlSeconds: 600,
          tenantClaim: config.auth.claims.tenant,
        });
      for (const name of ['alice', 'bob']) {
        const c = new NamedClient(name);
        await c.connect(new URL('/mcp', base), await token(name));
        clients.push(c);
      }
    });
    after(async () => {
      for (const c of clients) await c.client.close();
      await app?.close();
    });

    it('each client completes a sampling and an elicitation round while the other is busy', async () => {
      const [alice, bob] = clients as [NamedClient, NamedClient];
      const names = (await alice.client.listTools()).tools.map((t) => t.name);
      for (const tool of ['trigger-sampling-request', 'trigger-elicitation-request']) assert.ok(names.includes(tool), `${tool} is listed`);
      await roundsWhileOtherBusy(alice, 'alice', bob, 'bob', 'sampling');
      await roundsWhileOtherBusy(bob, 'bob', alice, 'alice', 'elicitation');
    });

    it('a client without the sampling capability still sees the tool (no MCP field says it needs one); calling it fails, saying why', async () => {
      const plain = new Client({ name: 'plain', version: '1.0.0' }, { capabilities: {} });
      await plain.connect(new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { authorization: `Bearer ${await token('plain')}` } } }));
      try {
        assert.ok((await plain.listTools()).tools.some((t) => t.name === 'trigger-sampling-request'));
        const answer = await plain.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'x', maxTokens: 5 } }).then(
          (r) => `${r.isError ? 'tool error: ' : ''}${textOf(r)}`,
          (err: Error) => err.message,
        );
        assert.match(answer, /did not declare the "sampling" capability/);
      } finally {
        await plain.close();
      }
    });
  });

  describe('a shared server-everything', () => {
    let gw: RunningGateway;
    const logLines: string[] = [];
    const clients: NamedClient[] = [];

    before(async () => {
      gw = await startGateway({ upstreams: [everythingUpstream('everything', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] }, { logLines });
      for (const name of ['carol', 'dave']) {
        const c = new NamedClient(name);
        await c.client.connect(new StreamableHTTPClientTransport(gw.url()));
        clients.push(c);
      }
    });
    after(async () => {
      for (const c of clients) await c.client.close();
      await gw?.close();
    });

    it('refuses a round it cannot attribute, with a warning naming upstream, method and the fix, and counts it', async () => {
      const [carol, dave] = clients as [NamedClient, NamedClient];
      const hold = carol.hold('sampling');
      const carolCall = carol.sample();
      await hold.reached;
      // Two sessions have calls in flight on the one shared process now: dave's sampling has no owner it can prove.
      const refused = await dave.client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'x', maxTokens: 5 } }).then(
        (r) => textOf(r),
        (err: Error) => err.message,
      );
      assert.match(refused, /cannot tell which client session "sampling\/createMessage" is for/);
      hold.release();
      assert.match(await carolCall, /sampled by carol/, 'the attributable round still completes');

      await until('the warning', () => logLines.some((l) => l.includes('"level":40') && l.includes('refused \\"sampling/createMessage\\"')));
      const warning = JSON.parse(logLines.find((l) => l.includes('refused \\"sampling/createMessage\\"'))!) as Record<string, unknown>;
      assert.equal(warning.upstream, 'everything');
      assert.equal(warning.method, 'sampling/createMessage');
      assert.match(String(warning.msg), /set sharing: per-session on upstream "everything"/);
      const metrics = await (await fetch(gw.app.metricsUrl!)).text();
      assert.match(metrics, /switchboard_unattributed_requests_total\{upstream="everything",method="sampling\/createMessage"\} 1/);
    });
  });
});
