// A user-oauth upstream's refresh path with nothing mocked: a token endpoint on a loopback port whose
// answers the test scripts, and the gateway's own UserConsent (vault, flows, logger) around it. Several
// rigs on one Redis store are several replicas sharing a vault.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { parseConfig } from '../../src/config/load.js';
import type { UpstreamConfig } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';
import type { BearerSource } from '../../src/upstream/bearer-source.js';
import { ConsentFlows } from '../../src/upstream/consent-flows.js';
import { CredentialVault } from '../../src/upstream/credential-vault.js';
import type { UpstreamUser } from '../../src/upstream/upstream-user.js';
import { UserConsent } from '../../src/upstream/user-consent.js';
import type { UserOAuthSettings } from '../../src/upstream/user-oauth-client.js';
import type { VaultStore } from '../../src/upstream/vault-store.js';

export interface TokenAnswer {
  status: number;
  body: unknown;
  delayMs?: number;
}

export interface TokenEndpoint {
  url: string;
  /** Every request's form, in arrival order. */
  forms: URLSearchParams[];
  close(): Promise<void>;
}

/** `answer` may hold its answer back (a promise) until the test lets it go: a refresh in flight for as long as the test needs. */
export async function startTokenEndpoint(answer: (form: URLSearchParams) => TokenAnswer | Promise<TokenAnswer>): Promise<TokenEndpoint> {
  const forms: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      forms.push(form);
      void Promise.resolve(answer(form)).then((a) =>
        setTimeout(() => {
          res.writeHead(a.status, { 'content-type': 'application/json' });
          res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
        }, a.delayMs ?? 0),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`,
    forms,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export const ALICE: UpstreamUser = { issuer: 'https://issuer.test', subject: 'alice', tenant: 'acme' };
export const VAULT_KEY = randomBytes(32);

/** A rotating authorization server: each refresh token works once; the winner's answer takes winnerDelayMs, a reuse is refused at once. */
export function rotating(first: string, winnerDelayMs: number): { answer: (form: URLSearchParams) => TokenAnswer; issued: () => number } {
  const valid = new Set([first]);
  let n = 0;
  return {
    issued: () => n,
    answer: (form) => {
      const rt = form.get('refresh_token') ?? '';
      if (!valid.has(rt)) return { status: 400, body: { error: 'invalid_grant', error_description: 'refresh token already used' } };
      valid.delete(rt);
      n++;
      valid.add(`rt-${n + 1}`);
      return { status: 200, delayMs: winnerDelayMs, body: { access_token: `at-${n + 1}`, token_type: 'Bearer', expires_in: 3600, refresh_token: `rt-${n + 1}` } };
    },
  };
}

/** An answer held back: `arrived` settles when the request reaches the endpoint, which answers once `release` is called. */
export function held(): { answer: () => Promise<TokenAnswer>; arrived: Promise<void>; release(a: TokenAnswer): void } {
  let arrive!: () => void;
  let release!: (a: TokenAnswer) => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const answer = new Promise<TokenAnswer>((resolve) => (release = resolve));
  return {
    arrived,
    release,
    answer: () => {
      arrive();
      return answer;
    },
  };
}

export interface Rig {
  consent: UserConsent;
  vault: CredentialVault;
  upstream: UpstreamConfig & { auth: UserOAuthSettings };
  /** A new credential object for the user, as each per-user instance or per-session process start makes. */
  credential(user?: UpstreamUser): BearerSource;
  /** The log lines written so far, parsed. */
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** One replica's UserConsent for upstream "tickets" at tokenEndpoint, its vault on `store`. */
export function consentRig(tokenEndpoint: string, store: VaultStore, o: { refreshSkewMs?: number } = {}): Rig {
  const config = parseConfig({
    server: { host: '127.0.0.1', publicUrl: 'https://gw.test' },
    auth: { mode: 'jwt', issuer: ALICE.issuer, hmacSecret: 'x'.repeat(32), allowHmac: true },
    vault: { key: VAULT_KEY.toString('base64') },
    tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
    endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
    upstreams: [
      {
        name: 'tickets',
        transport: 'streamable-http',
        url: 'http://127.0.0.1:9/mcp',
        sharing: 'per-user',
        auth: { type: 'user-oauth', clientId: 'switchboard', clientSecret: 's3cret', authorizationEndpoint: 'https://as.test/authorize', tokenEndpoint, refreshSkewMs: o.refreshSkewMs ?? 60_000 },
      },
    ],
  });
  const upstream = config.upstreams[0] as UpstreamConfig & { auth: UserOAuthSettings };
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const vault = new CredentialVault(VAULT_KEY, [], store);
  const consent = new UserConsent({ vault, flows: new ConsentFlows(VAULT_KEY, store, 60_000), publicUrl: 'https://gw.test', upstream: () => upstream, logger: createLogger('info', sink) });
  return { consent, vault, upstream, logs, credential: (user = ALICE) => consent.credential(upstream, upstream.auth, user), close: () => consent.close() };
}
