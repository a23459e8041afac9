// The user's browser in the user-consent suites: follows a consent URL from a -32042 through the
// gateway's /oauth/start (its confirmation page, then the page's form POSTed as a browser does: same
// origin, with the page's cookie), the authorization server's /authorize (which redirects at once) and
// back to the gateway's /oauth/callback, keeping the cookie the POST set. The gateway's public URL (what the
// links name) is mapped to the address the test gateway really listens on.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PUBLIC_URL } from './tokens.js';

export interface Hop {
  status: number;
  location: string | undefined;
  cookie: string | undefined;
  text: string;
}

export function local(url: string, base: string): string {
  return url.startsWith(PUBLIC_URL) ? base + url.slice(PUBLIC_URL.length) : url;
}

export async function hop(url: string, cookie?: string): Promise<Hop> {
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  // The cookie set, not one cleared (a callback that goes on clears its own and sets the next sign-in's).
  const set = res.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => !c.endsWith('='));
  return { status: res.status, location: res.headers.get('location') ?? undefined, cookie: set, text: await res.text() };
}

/** The confirmation page of a consent link: its form's values and the cookie it set, as a browser keeps them. */
export interface ConfirmPage {
  status: number;
  text: string;
  flow: string | undefined;
  confirm: string | undefined;
  cookie: string | undefined;
}

/** Opens a consent link (GET /oauth/start): the confirmation page. */
export async function openLink(base: string, consentUrl: string): Promise<ConfirmPage> {
  const res = await fetch(local(consentUrl, base), { redirect: 'manual' });
  const text = await res.text();
  const value = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(text)?.[1]?.replace(/&amp;/g, '&');
  return { status: res.status, text, flow: value('flow'), confirm: value('confirm'), cookie: res.headers.getSetCookie()[0]?.split(';')[0] };
}

/** What a POST to /oauth/start sends: by default, the page's own form from the page's browser, same-origin. */
export interface Submit {
  flow?: string | undefined;
  confirm?: string | undefined;
  cookie?: string | undefined;
  headers?: Record<string, string>;
}

/** Submits the confirmation (POST /oauth/start): the answer, with the consent cookie it set. */
export async function submit(base: string, page: ConfirmPage, over: Submit = {}): Promise<Hop> {
  const form = new URLSearchParams();
  const flow = 'flow' in over ? over.flow : page.flow;
  const confirm = 'confirm' in over ? over.confirm : page.confirm;
  if (flow !== undefined) form.set('flow', flow);
  if (confirm !== undefined) form.set('confirm', confirm);
  const cookie = 'cookie' in over ? over.cookie : page.cookie;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(PUBLIC_URL).origin, 'sec-fetch-site': 'same-origin', ...(cookie ? { cookie } : {}), ...over.headers };
  const res = await fetch(`${base}/oauth/start`, { method: 'POST', redirect: 'manual', headers, body: form.toString() });
  const set = res.headers.getSetCookie().find((c) => c.startsWith('swb_consent_'));
  return { status: res.status, location: res.headers.get('location') ?? undefined, cookie: set?.split(';')[0], text: await res.text() };
}

/** Start (the page, then its POST) and authorize: the callback URL the authorization server sent the browser to, and the browser's cookie. */
export async function authorize(base: string, consentUrl: string): Promise<{ callback: string; cookie: string | undefined; authorizeUrl: string }> {
  const page = await openLink(base, consentUrl);
  if (page.status !== 200) throw new Error(`/oauth/start answered ${page.status}: ${page.text}`);
  const start = await submit(base, page);
  if (start.status !== 303 || !start.location) throw new Error(`POST /oauth/start answered ${start.status}: ${start.text}`);
  const as = await hop(start.location);
  if (as.status !== 302 || !as.location) throw new Error(`/authorize answered ${as.status}: ${as.text}`);
  return { callback: local(as.location, base), cookie: start.cookie, authorizeUrl: start.location };
}

/** The whole consent, as the user's browser makes it: the callback's answer. */
export async function consent(base: string, consentUrl: string): Promise<Hop> {
  const a = await authorize(base, consentUrl);
  return hop(a.callback, a.cookie);
}

/** The official SDK client (v1), declaring URL-mode elicitation, with a bearer token. */
export async function urlClient(base: string, token: string, name: string, path = '/mcp'): Promise<Client> {
  const authFetch = (url: string | URL, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(url, { ...init, headers });
  };
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, base), { fetch: authFetch }));
  return client;
}

/** The consent URL `sub` is asked to follow: a client of theirs on `path` calls whoami, which must be refused -32042. */
export async function askedConsent(base: string, token: string, sub: string, path = '/mcp'): Promise<string> {
  const c = await urlClient(base, token, sub, path);
  try {
    const err = await c.callTool({ name: 'whoami', arguments: { claimed: sub } }).then(
      (r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`),
      (e: unknown) => e,
    );
    return consentUrlOf(err);
  } finally {
    await c.close();
  }
}

/** The consent URL of a -32042 (URLElicitationRequired) error, or a failure saying what came instead. */
export function consentUrlOf(err: unknown): string {
  const e = err as { code?: number; data?: { elicitations?: Array<{ mode?: string; url?: string }> }; message?: string };
  if (e.code !== -32042) throw new Error(`expected -32042, got ${String(e.code)}: ${e.message}`);
  const el = e.data?.elicitations?.[0];
  if (el?.mode !== 'url' || !el.url) throw new Error(`no URL elicitation in ${JSON.stringify(e.data)}`);
  return el.url;
}
