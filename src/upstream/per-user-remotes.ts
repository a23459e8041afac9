import type { Agent, Dispatcher } from 'undici';
import type { RemoteAgents, RemoteDispatchers } from './remote-agents.js';
import type { RemoteUpstreamConfig, UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { Transport } from '../transport/transport.js';
import { authServerAgent, authServerHttp } from './auth-server-agent.js';
import type { BearerSource } from './bearer-source.js';
import { SseClientTransport } from './sse-client.js';
import { StreamableHttpClientTransport } from './streamable-http-client.js';
import type { SubjectTokens } from './subject-tokens.js';
import { TokenExchange, TokenExchangeClient, type TokenExchangeSettings } from './token-exchange.js';
import type { ProcessCredential, UserConsent } from './user-consent.js';
import type { UserOAuthSettings } from './user-oauth-client.js';
import { ConsentPin, UserOAuthCredential } from './user-oauth-credential.js';
import { userKey, type UpstreamUser } from './upstream-user.js';

/** One user's link state for one upstream: its own connection pool and its own credential. */
interface UserRemote {
  agents: RemoteAgents;
  credentials: BearerSource;
  /** Transports open on it; the pool closes with the last one. */
  links: number;
}

export function remoteTransport(u: RemoteUpstreamConfig, agent: Dispatcher | RemoteDispatchers, credentials: BearerSource | undefined, logger: Logger): Transport {
  return u.transport === 'sse' ? new SseClientTransport(u, agent, credentials, logger) : new StreamableHttpClientTransport(u, agent, credentials, logger);
}

/**
 * The links of upstreams whose credential is per user (token exchange, user consent): each (upstream, user) gets
 * an undici connection pool and a token cache of its own, so no connection or token is ever used for
 * two users. Pool and token go when the user's last link closes (per-user instances stop when idle).
 */
export class PerUserRemotes {
  readonly #subjects: SubjectTokens;
  readonly #newAgents: (u: RemoteUpstreamConfig) => RemoteAgents;
  /** Per upstream: the client secret, the actor token, and the connections to the token endpoint. */
  readonly #clients = new Map<string, { client: TokenExchangeClient; agent: Agent }>();
  /** Per upstream config and user: a reload that changes the upstream gives its new instances new links. */
  readonly #users = new Map<string, UserRemote>();
  /** A number per upstream config object, for the keys above. */
  readonly #versions = new WeakMap<UpstreamConfig, number>();
  #nextVersion = 0;

  /** User consent (user-oauth upstreams), when the vault is configured. */
  consent: UserConsent | undefined;

  constructor(subjects: SubjectTokens, newAgents: (u: RemoteUpstreamConfig) => RemoteAgents) {
    this.#subjects = subjects;
    this.#newAgents = newAgents;
  }

  create(u: RemoteUpstreamConfig, auth: TokenExchangeSettings | UserOAuthSettings, owner: UpstreamUser | undefined, logger: Logger): Transport {
    if (!owner) throw new GatewayError('SWB_CONFIG_INVALID', `upstream "${u.name}" has a per-user credential, so each of its instances needs the user it serves (sharing: per-user)`, { upstream: u.name });
    let version = this.#versions.get(u);
    if (version === undefined) this.#versions.set(u, (version = this.#nextVersion++));
    // An exchanged token is its session's (see UpstreamUser.session): a session's links share it with no other session.
    const key = `${version}\n${userKey(owner)}${auth.type === 'token-exchange' && owner.session ? `\n${owner.session.id}` : ''}`;
    let r = this.#users.get(key);
    if (!r) {
      r = { agents: this.#newAgents(u), credentials: this.credentials(u, auth, owner, logger), links: 0 };
      this.#users.set(key, r);
    }
    r.links++;
    // Each connection keeps to the consent it started with (see ConsentPin): a new one reconnects it.
    const pin = r.credentials instanceof UserOAuthCredential ? new ConsentPin(r.credentials, () => void transport.close()) : undefined;
    const transport = remoteTransport(u, r.agents, pin ?? r.credentials, logger);
    const close = transport.close.bind(transport);
    let closed = false;
    const user = r;
    // long-lived: one per user's remote connection
    transport.close = async () => {
      await close();
      if (closed) return;
      closed = true;
      if (--user.links > 0 || this.#users.get(key) !== user) return;
      this.#users.delete(key);
      await user.agents.close();
    };
    return transport;
  }

  /**
   * One user's token source for an upstream: an exchange of their token, or their consented token from
   * the vault. A stdio upstream (sharing: per-session) takes one when its process starts. `logger` hears of
   * an exchange that failed while the token held, still valid, was used instead (at most one per 5 s).
   */
  credentials(u: UpstreamConfig, auth: TokenExchangeSettings | UserOAuthSettings, owner: UpstreamUser, logger?: Logger): BearerSource {
    if (auth.type === 'token-exchange') {
      const c = this.#client(u, auth);
      const renewalFailed = logger && ((err: Error) => logger.warn({ err: err.message }, "exchanging the user's token for the upstream failed; the one held is used until it expires"));
      return new TokenExchange(c.client, owner, this.#subjects, c.agent, renewalFailed);
    }
    if (!this.consent) throw new GatewayError('SWB_CONFIG_INVALID', `upstream "${u.name}" asks users for consent, which needs the vault (vault.key)`, { upstream: u.name });
    return this.consent.credential(u, auth, owner);
  }

  /**
   * The token a stdio process is started with: consented, with the check that the consent still stands before
   * each request (see UserConsent.processCredential), or exchanged, with the check that it is still the one
   * the exchange gives (exchangedForProcess).
   */
  processCredential(u: UpstreamConfig, auth: TokenExchangeSettings | UserOAuthSettings, owner: UpstreamUser): { token(): Promise<string>; check?: ProcessCredential['check'] } {
    if (auth.type === 'user-oauth' && this.consent) return this.consent.processCredential(u, auth, owner);
    const source = this.credentials(u, auth, owner);
    return auth.type === 'token-exchange' ? exchangedForProcess(u.name, source) : source;
  }

  #client(u: UpstreamConfig, auth: TokenExchangeSettings): { client: TokenExchangeClient; agent: Agent } {
    let c = this.#clients.get(u.name);
    if (!c || c.client.settings !== auth) {
      // A reload changed the settings. The old client is not closed: the links made before the reload
      // still exchange through it until they close, and its idle connections end by their keep-alive.
      const agent = authServerAgent(u);
      c = { client: new TokenExchangeClient(u.name, auth, agent, authServerHttp(u).bodyTimeoutMs), agent };
      this.#clients.set(u.name, c);
    }
    return c;
  }

  async close(): Promise<void> {
    const agents = [...[...this.#users.values()].map((r) => r.agents), ...[...this.#clients.values()].map((r) => r.agent)];
    this.#users.clear();
    this.#clients.clear();
    await Promise.all(agents.map((a) => a.close().catch(() => {})));
  }
}

/**
 * An exchanged token a process keeps in its environment from its start. The exchange renews it before it
 * expires and exchanges the session's latest token once its client sends another (a narrower one): a remote
 * upstream gets the new one with its next request, but the process kept its start token, so a long session's
 * calls ran with an expired token, or with a broader token's grant after its client narrowed it. Before each
 * request the token the exchange gives now (cached: no exchange until renewal) is compared with the one the
 * process holds: another (details.replaced) has a process started with it take this request, never sent, and
 * every later one, while the old one finishes the calls it runs (checkedRequests, UpstreamInstance): the old
 * token is still good, renewed before it expires. One the exchange cannot give (the user's token expired,
 * refused) stops the process, the request failing with why: the process's own has expired, or is no longer
 * the user's grant.
 */
function exchangedForProcess(upstream: string, source: BearerSource): ProcessCredential {
  let pinned: string | undefined;
  return {
    token: async () => (pinned = await source.token()),
    check: async () => {
      const now = await source.token().catch((err: unknown) => (err instanceof GatewayError ? err : new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${upstream}": the user's token could not be exchanged: ${(err as Error).message}`, { upstream })));
      if (now instanceof GatewayError) return now;
      if (now === pinned) return undefined;
      return new GatewayError('SWB_UPSTREAM_SESSION_EXPIRED', `upstream "${upstream}": the token its process was started with was renewed or replaced; a process started with the new one takes its requests`, { upstream, unsent: true, replaced: true });
    },
  };
}
