// An OAuth 2 authorization server for the per-user credential suites: oauth2-mock-server (npm) signs the
// tokens and serves its JWKS; on top of it, /exchange implements RFC 8693 token exchange as a real
// authorization server does: client authentication (HTTP Basic), the subject token verified against its
// issuer's keys and audience, the actor token verified against this server's own keys, and an issued
// token whose audience is the requested one and whose `act` names the actor. client_credentials on the
// same endpoint gives the gateway its actor token. Every exchange is counted per subject.
import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import { createLocalJWKSet, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';

export interface ExchangeServerOptions {
  clientId: string;
  clientSecret: string;
  /** Whose tokens may be exchanged: their issuer, their public keys and the audience they were issued for. */
  subjectIssuer: string;
  subjectKeys: JWK[];
  subjectAudience: string;
  /** Lifetime of the issued tokens, in seconds. */
  ttlSec?: number;
}

export interface ExchangeServer {
  issuer: string;
  tokenEndpoint: string;
  /** Exchanges granted, per subject. */
  exchanges: Map<string, number>;
  /** Subjects the server refuses to exchange for (invalid_grant). */
  refuse: Set<string>;
  /** The server's verification keys (for the upstream fixture). */
  keys(): JWK[];
  /** From now on only `secret` authenticates the gateway (a rotated client secret; the old one is revoked). */
  rotateClientSecret(secret: string): void;
  close(): Promise<void>;
}

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

function send(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

export async function startExchangeServer(options: ExchangeServerOptions): Promise<ExchangeServer> {
  const o = { ...options };
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const issuer = server.issuer.url!;
  const ttl = o.ttlSec ?? 300;
  const exchanges = new Map<string, number>();
  const refuse = new Set<string>();
  const subjectKeys = createLocalJWKSet({ keys: o.subjectKeys });
  const ownKeys = () => createLocalJWKSet({ keys: server.issuer.keys.toJSON() as JWK[] });
  const sign = (claims: JWTPayload) => server.issuer.buildToken({ expiresIn: ttl, scopesOrTransform: (_h, p) => void Object.assign(p, claims) });

  server.service.addRoute('POST', '/exchange', async (req, res) => {
    const body = (req as unknown as { body: Record<string, string> }).body;
    const [id, secret] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /i, ''), 'base64').toString().split(':').map(decodeURIComponent);
    if (id !== o.clientId || secret !== o.clientSecret) return send(res, 401, { error: 'invalid_client' });
    if (body.grant_type === 'client_credentials') {
      return send(res, 200, { access_token: await sign({ sub: o.clientId, client_id: o.clientId, aud: issuer }), token_type: 'Bearer', expires_in: ttl });
    }
    if (body.grant_type !== GRANT) return send(res, 400, { error: 'unsupported_grant_type' });
    if (body.subject_token_type !== ACCESS || !body.subject_token) return send(res, 400, { error: 'invalid_request', error_description: 'subject_token of type access_token required' });
    let subject: JWTPayload;
    try {
      ({ payload: subject } = await jwtVerify(body.subject_token, subjectKeys, { issuer: o.subjectIssuer, audience: o.subjectAudience }));
    } catch (err) {
      return send(res, 400, { error: 'invalid_grant', error_description: `subject_token: ${(err as Error).message}` });
    }
    let act: JWTPayload | undefined;
    if (body.actor_token) {
      try {
        ({ payload: act } = await jwtVerify(body.actor_token, ownKeys(), { issuer }));
      } catch (err) {
        return send(res, 400, { error: 'invalid_grant', error_description: `actor_token: ${(err as Error).message}` });
      }
    }
    if (refuse.has(subject.sub!)) return send(res, 400, { error: 'invalid_grant', error_description: 'this user may not use the requested audience' });
    if (!body.audience) return send(res, 400, { error: 'invalid_target', error_description: 'audience required' });
    exchanges.set(subject.sub!, (exchanges.get(subject.sub!) ?? 0) + 1);
    // subject_scope: what the exchanged token was issued on (a real server narrows the grant to it), so an
    // upstream can tell which of a user's tokens a call was made with.
    const claims: JWTPayload = { sub: subject.sub, tenant: subject.tenant, aud: body.audience, scope: body.scope, subject_scope: subject.scope, ...(act ? { act: { sub: act.sub } } : {}) };
    return send(res, 200, { access_token: await sign(claims), issued_token_type: ACCESS, token_type: 'Bearer', expires_in: ttl });
  });

  return {
    issuer,
    tokenEndpoint: `${issuer}/exchange`,
    exchanges,
    refuse,
    keys: () => server.issuer.keys.toJSON() as JWK[],
    rotateClientSecret: (secret) => void (o.clientSecret = secret),
    close: () => server.stop(),
  };
}
