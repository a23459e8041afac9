import { Agent } from 'undici';
import type { VerifyUserConfig } from '../config/vault-schema.js';
import { GatewayError } from '../errors.js';
import type { UpstreamUser } from './upstream-user.js';
import { UserOAuthClient, type UserOAuthSettings } from './user-oauth-client.js';

/** Who a token of the gateway's own identity provider authenticates as, with the gateway's own authentication (the MCP routes'). */
export type UserCheck = (accessToken: string) => Promise<UpstreamUser>;

/** The deadlines of the identity provider's requests: those of an upstream's authorization server by default. */
const CONNECT_MS = 10_000;
const ANSWER_MS = 30_000;
const BODY_MS = 60_000;

/**
 * vault.verifyUser: before a consent link goes on to the upstream's authorization server, the browser
 * signs in at the gateway's own identity provider (authorization code + PKCE), and the access token it
 * gets is authenticated as a client's bearer token is (same issuer, audience, keys and principal mapping)
 * to say who completes the link. The gateway is an OAuth client there as it is of an upstream's server.
 */
export class GatewaySignIn {
  readonly client: UserOAuthClient;
  readonly #agent: Agent;
  #check: UserCheck | undefined;

  constructor(cfg: VerifyUserConfig) {
    this.#agent = new Agent({ connect: { timeout: CONNECT_MS }, headersTimeout: ANSWER_MS, bodyTimeout: BODY_MS });
    // callback: unused, the sign-in has its own redirect URI (signInRedirectUri).
    const settings: UserOAuthSettings = { type: 'user-oauth', refreshSkewMs: 0, callback: 'own', ...cfg };
    this.client = new UserOAuthClient({ name: "the gateway's identity provider" }, settings, this.#agent, BODY_MS);
  }

  /** The gateway's authentication, given once the edge has built it (app.ts). */
  checkWith(check: UserCheck): void {
    this.#check = check;
  }

  /** The principal the browser signed in as: the code redeemed, its access token authenticated. */
  async user(code: string, verifier: string, redirectUri: string): Promise<UpstreamUser> {
    if (!this.#check) throw new GatewayError('SWB_CONFIG_INVALID', 'vault.verifyUser: the gateway has no authentication to check the sign-in token with');
    const tokens = await this.client.redeem(code, verifier, redirectUri);
    return this.#check(tokens.accessToken);
  }

  close(): Promise<void> {
    return this.#agent.close().catch(() => {});
  }
}
