import type { FastifyReply } from 'fastify';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * The consent pages' headers: no script, style, image or frame from anywhere (default-src 'none'), never
 * framed (frame-ancestors 'none', X-Frame-Options: a page that could be framed could be clicked through
 * under a decoy), never cached, no referrer. No form-action: the confirmation's POST is answered with a
 * redirect to the authorization server, which form-action 'self' would block.
 */
function html(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  const doc = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>${esc(title)} · Switchboard</title></head><body><h1>${esc(title)}</h1>${body}</body></html>`;
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-security-policy', "default-src 'none'; base-uri 'none'; frame-ancestors 'none'")
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(doc);
}

/** A page of one paragraph (the consent routes' answers). */
export function page(reply: FastifyReply, status: number, title: string, text: string): FastifyReply {
  return html(reply, status, title, `<p>${esc(text)}</p>`);
}

/** What the confirmation page names and carries. */
export interface Confirmation {
  /** Where the form posts: /oauth/start under server.publicUrl's path. */
  action: string;
  flow: string;
  form: string;
  upstream: string;
  user: { issuer: string; subject: string; tenant: string };
}

/**
 * The page a consent link opens: it says plainly which gateway user the account will serve and at which
 * upstream, warns a person who did not start this from their own client, and continues only by its form's
 * POST (with the page's confirmation value), never by the link alone.
 */
export function confirmPage(reply: FastifyReply, c: Confirmation): FastifyReply {
  const who = `<strong>${esc(c.user.subject)}</strong> (tenant ${esc(c.user.tenant)}, signed in at ${esc(c.user.issuer)})`;
  const body = [
    `<p>You are about to link your account at the upstream <strong>${esc(c.upstream)}</strong> to the gateway user ${who}.</p>`,
    `<p>Whoever is that gateway user will act at <strong>${esc(c.upstream)}</strong> with the account you sign in with next.</p>`,
    `<p><strong>Do not continue</strong> unless you are ${esc(c.user.subject)} and started this just now from your own MCP client. If someone sent you this link, close this page: continuing would give them your account.</p>`,
    `<form method="post" action="${esc(c.action)}">`,
    `<input type="hidden" name="flow" value="${esc(c.flow)}">`,
    `<input type="hidden" name="confirm" value="${esc(c.form)}">`,
    `<button type="submit">I am ${esc(c.user.subject)}: link my ${esc(c.upstream)} account</button>`,
    '</form>',
  ].join('');
  return html(reply, 200, `Link your ${c.upstream} account`, body);
}
