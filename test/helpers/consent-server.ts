// An OAuth 2.1 authorization server for the user-consent suites: oauth2-mock-server (npm) answers
// /authorize with a redirect carrying a code at once (headless: the test "signs in" as `loginAs`), checks
// PKCE at /token, and signs the tokens. On top of it, each code and refresh token is bound to the user who
// signed in, issued tokens name that user and the upstream's audience, refresh tokens rotate, and a user
// whose grant is revoked gets invalid_grant on refresh. Every grant is counted per user; every token and
// refresh token issued is kept (the suites scan logs and metrics for them).
import type { IncomingMessage } from 'node:http';
import type { JWK } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';

export interface ConsentServer {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** Who signs in at the next /authorize. */
  loginAs: string;
  /** Lifetime (expires_in) of the access tokens issued from now on. */
  ttlSec: number;
  /** Requests that reached /authorize (each issued a code). */
  authorizes: number;
  /** Authorization codes redeemed, per user. */
  codes: Map<string, number>;
  /** Refreshes granted, per user. */
  refreshes: Map<string, number>;
  /** Token requests refused, with the reason. */
  refused: string[];
  /** Every access and refresh token issued. */
  issued: Set<string>;
  /** Ends a user's grants: the refresh tokens they hold now get invalid_grant (a new consent gets new ones). */
  revoke(sub: string): void;
  keys(): JWK[];
  close(): Promise<void>;
}

type TokenRequest = IncomingMessage & { body: Record<string, string> };
type Mutable = { body: Record<string, unknown>; statusCode: number };

/** `issInRedirect`: the server names itself in its authorization responses (RFC 9207 `iss`), as Keycloak and others do. */
export async function startConsentServer(o: { audience: string; ttlSec?: number; issInRedirect?: boolean }): Promise<ConsentServer> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const issuer = server.issuer.url!;
  const codeUser = new Map<string, string>();
  const refreshUser = new Map<string, string>();
  const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const s: ConsentServer = {
    issuer,
    authorizationEndpoint: `${issuer}/authorize`,
    tokenEndpoint: `${issuer}/token`,
    loginAs: 'nobody',
    ttlSec: o.ttlSec ?? 300,
    authorizes: 0,
    codes: new Map(),
    refreshes: new Map(),
    refused: [],
    issued: new Set(),
    revoke: (sub) => {
      for (const [t, u] of refreshUser) if (u === sub) refreshUser.delete(t);
    },
    keys: () => server.issuer.keys.toJSON() as JWK[],
    close: () => server.stop(),
  };
  const userOf = (req: TokenRequest) => (req.body.grant_type === 'authorization_code' ? codeUser.get(req.body.code ?? '') : refreshUser.get(req.body.refresh_token ?? ''));

  server.service.on('beforeAuthorizeRedirect', (redirect: { url: URL }) => {
    const code = redirect.url.searchParams.get('code');
    s.authorizes++;
    if (code) codeUser.set(code, s.loginAs);
    if (o.issInRedirect) redirect.url.searchParams.set('iss', issuer);
  });
  server.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }, req: TokenRequest) => {
    Object.assign(token.payload, { sub: userOf(req), aud: o.audience });
  });
  server.service.on('beforeResponse', (res: Mutable, req: TokenRequest) => {
    const refuse = (why: string) => {
      s.refused.push(why);
      res.statusCode = 400;
      res.body = { error: 'invalid_grant', error_description: why };
    };
    const grant = req.body.grant_type;
    const sub = userOf(req);
    if (grant === 'authorization_code') {
      if (!req.body.code_verifier) return refuse('no PKCE code_verifier');
      if (!sub) return refuse('unknown code');
      codeUser.delete(req.body.code!); // a code works once
      count(s.codes, sub);
    } else if (grant === 'refresh_token') {
      if (!sub) return refuse('unknown or revoked refresh token');
      refreshUser.delete(req.body.refresh_token!); // rotated: the old one is spent
      count(s.refreshes, sub);
    } else return;
    const refresh = String(res.body.refresh_token);
    refreshUser.set(refresh, sub);
    res.body.expires_in = s.ttlSec;
    delete res.body.id_token;
    s.issued.add(String(res.body.access_token));
    s.issued.add(refresh);
  });
  return s;
}
