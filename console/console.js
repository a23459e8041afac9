// The Switchboard web console: everything it shows comes from the admin API of the listener that
// served it, live over /events; actions are the API's own routes. No build step, no dependencies.
import { fill, h, sideBySide, table } from './dom.js';
import { openStream } from './stream.js';

const TOKEN = 'switchboard.adminToken';
const AUDIT_KEEP = 200;
const $ = (id) => document.getElementById(id);
let stream;

const authHeaders = () => {
  const t = sessionStorage.getItem(TOKEN);
  return t ? { authorization: `Bearer ${t}` } : {};
};

/** An admin API call; a refusal sends the operator back to the sign-in form. */
async function api(method, path, body) {
  const headers = { ...authHeaders(), ...(body ? { 'content-type': 'application/json' } : {}) };
  const res = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  const data = text ? JSON.parse(text) : undefined;
  if (res.status === 401 || res.status === 403) signIn(data?.error?.message);
  if (!res.ok) throw new Error(data?.error?.message ?? `the gateway answered ${res.status}`);
  return data;
}

/** Runs an action from a button: disabled while it runs, its outcome said in a status region. */
async function act(button, status, run) {
  button.disabled = true;
  try {
    const said = await run();
    if (typeof said === 'string') status.textContent = said;
  } catch (err) {
    status.textContent = `Failed: ${err.message}`;
  } finally {
    button.disabled = false;
  }
}

/** The gateway's clock minus this browser's (from its `hello`): a session's age is counted on the gateway's clock. */
let skew = 0;
const age = (s) => (s < 60 ? `${Math.round(s)} s` : s < 3600 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`);
const badge = (text, kind) => h('span', { class: `badge ${kind}` }, text);
const empty = (text) => h('p', { class: 'empty' }, text);

function renderUpstreams({ items }) {
  if (items.length === 0) return fill($('upstreams-body'), empty('No upstreams.'));
  const instance = (i) => h('li', {}, `pid ${i.pid ?? '–'} `, badge(i.state, i.state === 'ready' ? 'ok' : 'bad'), ' breaker ', badge(i.circuit, i.circuit === 'closed' ? 'ok' : 'bad'), i.lastError ? h('span', { class: 'err' }, ` ${i.lastError}`) : null);
  // With replicas, each one's instances are a row of their own; restart acts on this replica's.
  const many = new Set(items.map((u) => u.replica)).size > 1;
  const rows = items.map((u) =>
    h('tr', {},
      h('th', { scope: 'row' }, u.name),
      many ? h('td', {}, u.replica === replica ? `${u.replica} (this one)` : u.replica) : null,
      // A pool a reload or restart replaced, finishing its calls: its processes still run, no new call reaches it.
      h('td', {}, u.draining ? badge('draining', 'warn') : badge(u.ready ? 'ready' : 'not ready', u.ready ? 'ok' : 'bad')),
      h('td', {}, `${u.transport}, ${u.sharing}`),
      h('td', {}, u.instances.length ? h('ul', { class: 'plain' }, u.instances.map(instance)) : '–'),
      h('td', { class: 'num' }, u.inflight),
      h('td', { class: 'num' }, u.queued),
      h('td', { class: 'num' }, u.restarts),
      h('td', {}, u.replica !== replica || u.draining ? '' : h('button', { type: 'button', id: `restart-${u.name}`, 'aria-label': `Restart upstream ${u.name}`, onclick: (e) => act(e.currentTarget, $('upstreams-result'), () => restart(u.name)) }, 'Restart')),
    ),
  );
  fill($('upstreams-body'), table('Upstreams', ['Name', ...(many ? ['Replica'] : []), 'Health', 'Transport', 'Instances', 'In flight', 'Queued', 'Restarts', ''], rows));
}

/**
 * A restart answers with its report, as a reload does (200 either way): one that failed changed nothing,
 * on this replica or, with Redis, on the others (each one's report under `replicas`).
 */
async function restart(name) {
  const r = await api('POST', `/upstreams/${encodeURIComponent(name)}/restart`);
  const reports = r.replicas ? Object.entries(r.replicas) : [[replica, r]];
  const failed = reports.filter(([, x]) => x.error !== undefined || x.result === 'failed');
  if (failed.length === 0) return `Upstream ${name} restarted; the old instances drain.`;
  const where = r.replicas ? ` on ${failed.map(([id]) => id).join(', ')}` : '';
  return `Upstream ${name} not restarted${where}: ${failed.map(([, x]) => x.error ?? x.problems.join('; ')).join('; ')}`;
}

/**
 * When a session opened, in ms on the gateway's clock: its `openedAt`, which the sessions view carries
 * instead of the age so that it does not change (and the table is not rebuilt) at every tick; a replica
 * on an older release sends the age.
 */
const opened = (s) => (s.openedAt ? Date.parse(s.openedAt) : Date.now() + skew - s.ageSeconds * 1000);
const sinceOpened = (ms) => Math.max(0, (Date.now() + skew - ms) / 1000);

/** Counts the shown ages on, in place: only the text of a cell whose age changed. */
function refreshAges() {
  for (const td of document.querySelectorAll('#sessions-body [data-opened]')) {
    const text = age(sinceOpened(Number(td.dataset.opened)));
    if (td.textContent !== text) td.textContent = text;
  }
}

/**
 * The live view holds the first sessions by id (at most `limit`) and, while more are open, a cursor: the
 * operator pages on through GET /sessions (not live: each page as loaded), and comes back to the live one.
 * `paged`: the page shown instead of the live view ({ data, number }), or null.
 */
let liveSessions = { items: [] };
let paged = null;

function onSessions(data) {
  liveSessions = data;
  if (paged === null) renderSessions(data);
}

async function pageSessions(cursor, number) {
  const data = await api('GET', `/sessions?limit=${liveSessions.limit ?? 100}&cursor=${encodeURIComponent(cursor)}`);
  paged = { data, number };
  renderSessions(data);
}

function sessionsPager({ items, nextCursor, limit }) {
  const next = nextCursor ? h('button', { type: 'button', id: 'sessions-next', onclick: (e) => act(e.currentTarget, $('sessions-result'), () => pageSessions(nextCursor, (paged?.number ?? 1) + 1)) }, `Next ${limit ?? items.length} →`) : null;
  if (paged === null) return nextCursor ? ['Live: the first ', items.length, ' sessions by id; more are open. ', next] : [];
  const live = h('button', { type: 'button', id: 'sessions-live', onclick: () => ((paged = null), renderSessions(liveSessions)) }, '← First page (live)');
  return [`Page ${paged.number} by id, as loaded (not live). `, live, ' ', next];
}

function renderSessions(data) {
  const { items } = data;
  fill($('sessions-pager'), sessionsPager(data));
  if (items.length === 0) return fill($('sessions-body'), empty('No open sessions.'));
  const rows = items.map((s) =>
    h('tr', {},
      h('th', { scope: 'row' }, h('code', { title: s.id }, s.id.slice(0, 8))),
      h('td', {}, s.subject),
      h('td', {}, s.tenant),
      h('td', {}, s.endpoint),
      h('td', {}, `${s.transport}${s.protocolVersion ? ` ${s.protocolVersion}` : ''}`),
      h('td', { class: 'num', 'data-opened': opened(s) }, age(sinceOpened(opened(s)))),
      h('td', { class: 'num', title: s.inflight === null ? 'known to the replica holding it' : '' }, s.inflight ?? '—'),
      h('td', {}, `${s.replica ?? 'released'}${s.replica !== null && !s.replicaAlive ? ' (not alive)' : ''}`),
      h('td', {}, h('button', { type: 'button', class: 'danger', id: `end-${s.id}`, 'aria-label': `End session ${s.id.slice(0, 8)} of ${s.subject}`, onclick: (e) => act(e.currentTarget, $('sessions-result'), async () => `Session ${s.id.slice(0, 8)} ended by replica ${(await api('DELETE', `/sessions/${encodeURIComponent(s.id)}`)).endedBy}.`) }, 'End')),
    ),
  );
  fill($('sessions-body'), table('Sessions', ['Session', 'Subject', 'Tenant', 'Endpoint', 'Protocol', 'Age', 'In flight', 'Replica', ''], rows));
}

function renderTenants({ items }) {
  if (items.length === 0) return fill($('tenants-body'), empty('No tenants configured.'));
  const limits = (l) => Object.entries(l).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`).join(', ') || 'none';
  const rows = items.map((t) => h('tr', {}, h('th', { scope: 'row' }, t.name), h('td', {}, t.endpoints.join(', ')), h('td', {}, limits(t.limits)), h('td', { class: 'num' }, t.usage.sessions), h('td', { class: 'num' }, t.usage.inflight)));
  fill($('tenants-body'), table('Tenants', ['Tenant', 'Endpoints', 'Limits', 'Sessions', 'In flight'], rows));
}

function decide(how, p) {
  return async () => {
    const { items } = await api('POST', `/pins/${encodeURIComponent(p.upstream)}/${how}`, { tools: [{ tool: p.tool, hash: p.pendingHash }] });
    const outcome = items[0]?.outcome;
    if (outcome === 'approved') return `${p.upstream} / ${p.tool}: approved; clients are told to re-list.`;
    if (outcome === 'rejected') return `${p.upstream} / ${p.tool}: rejected; it stays withheld.`;
    if (outcome === 'pinned-in-config') return `${p.upstream} / ${p.tool} is pinned in the config: put ${p.pendingHash} in pinning.pins to accept it.`;
    return `${p.upstream} / ${p.tool}: no longer pending with the hash you reviewed; look again.`;
  };
}

/**
 * A pin card's element id, one per (upstream, tool): the names are encoded and joined with ":", which
 * neither encoding holds. Joined with "-" (which both names may hold), upstream "a" with tool "b-c" and
 * upstream "a-b" with tool "c" shared their ids, and a re-render put focus on the other card's button.
 */
const pinId = (kind, p) => `pin-${kind}:${encodeURIComponent(p.upstream)}:${encodeURIComponent(p.tool)}`;

function renderPins({ items, off }) {
  if (off) return fill($('pins-body'), empty('Tool pinning is off for every upstream.'));
  if (items.length === 0) return fill($('pins-body'), empty('No tool definition changes are waiting.'));
  const card = (p) => {
    const heading = pinId('heading', p);
    const button = (how, label, cls) => h('button', { type: 'button', class: cls, id: pinId(how, p), 'aria-describedby': heading, onclick: (e) => act(e.currentTarget, $('pins-result'), decide(how, p)) }, label);
    return h('article', { class: 'pin', 'aria-labelledby': heading },
      h('h3', { id: heading }, `${p.upstream} / ${p.tool} `, p.approvedHash === null ? badge('new tool', 'warn') : null, p.rejected ? badge('rejected', 'bad') : null),
      h('p', { class: 'meta' }, `First seen ${new Date(p.firstSeen).toLocaleString()} · pending ${p.pendingHash.slice(0, 12)}…`),
      p.old === null && p.approvedHash !== null ? h('p', { class: 'hint' }, 'This replica did not see the approved definition; only the pending one is shown.') : null,
      p.findings?.length ? h('p', { class: 'error' }, `Hidden text: ${p.findings.map((f) => `${f.kind} ×${f.count} in ${f.path}`).join('; ')}`) : null,
      p.new === null ? h('p', { class: 'hint' }, `This replica did not see the pending definition. Summary: ${p.summary}`) : sideBySide(p.diff),
      h('div', { class: 'actions' }, button('approve', 'Approve', 'primary'), p.rejected ? null : button('reject', 'Reject', 'danger')),
    );
  };
  fill($('pins-body'), items.map(card));
}

/** One replica's reload report: its outcome, then its problems, changes and warnings. */
function reloadReport(r, who) {
  const list = (title, xs) => (xs?.length ? [h('h3', {}, `${who}${title}`), h('ul', {}, xs.map((x) => h('li', {}, x)))] : []);
  if (r.error !== undefined) return h('p', { class: 'error' }, `${who}no report: ${r.error}`);
  const changes = r.changes ? Object.entries(r.changes.upstreams).filter(([k, v]) => k !== 'unchanged' && v.length).map(([k, v]) => `${k}: ${v.join(', ')}`) : [];
  const unchanged = r.restartRequired?.length ? 'Nothing applied: what changed needs a restart.' : 'Unchanged: the file is the config in force.';
  const head = { applied: 'Applied.', unchanged, invalid: 'Invalid: nothing was changed.', failed: 'Failed: see the problems.' }[r.result] ?? r.result;
  return [h('p', { class: r.result === 'invalid' || r.result === 'failed' ? 'error' : 'ok' }, `${who}${head}`), list('Problems', r.problems), list('Upstreams', changes), list('Needs a restart', r.restartRequired), list('Warnings', r.warnings)];
}

/**
 * With Redis every replica reloads its own file: each one's report is under `replicas` (this one's is
 * also the top level), and one that refused or failed must show, not only the replica this page talks to.
 */
function renderReload(r) {
  if (!r.replicas) return fill($('reload-result'), reloadReport(r, ''));
  const others = Object.entries(r.replicas).filter(([id]) => id !== replica);
  fill($('reload-result'),
    reloadReport(r, `Replica ${replica} (this one): `),
    others.map(([id, x]) => reloadReport(x, `Replica ${id}: `)),
    r.replicasError ? h('p', { class: 'error' }, `Other replicas: ${r.replicasError}`) : null,
    r.unansweredReplicas ? h('p', { class: 'error' }, `${r.unansweredReplicas} more replica(s) took the reload and did not answer: see their logs.`) : null,
  );
}

function auditText(l) {
  if (l.msg === 'tool pin') return `tool pin ${l.action}: ${l.upstream} / ${l.tool}`;
  if (l.msg === 'hidden text') return `hidden text in a ${l.item} ${l.where} (${l.action}): ${l.upstream ?? ''} ${l.name}`;
  return `${l.tenant}/${l.subject} ${l.method}${l.name ? ` ${l.name}` : ''} → ${l.decision}, ${l.outcome} (${l.latencyMs} ms)`;
}

function renderAudit({ lines, dropped }) {
  const tail = $('audit-tail');
  for (const l of lines) tail.append(h('li', { class: l.decision === 'deny' || l.outcome === 'error' ? 'bad' : '' }, h('time', { datetime: new Date(l.time).toISOString() }, new Date(l.time).toLocaleTimeString()), ' ', auditText(l)));
  if (dropped > 0) tail.append(h('li', { class: 'hint' }, `${dropped} more lines were not shown (too many at once)`));
  while (tail.children.length > AUDIT_KEEP) tail.firstElementChild.remove();
}

const VIEWS = { upstreams: renderUpstreams, sessions: onSessions, tenants: renderTenants, pins: renderPins, audit: renderAudit };

/** The replica whose admin API this console talks to (its `hello`). */
let replica;

function connect() {
  stream?.close();
  stream = openStream('/events', authHeaders, {
    onEvent(event, data) {
      if (event === 'hello') {
        $('login').hidden = true;
        $('panels').hidden = false;
        $('signout').hidden = !sessionStorage.getItem(TOKEN);
        replica = data.replica;
        skew = typeof data.time === 'number' ? data.time - Date.now() : 0;
        $('status').textContent = `Live · replica ${data.replica}`;
        $('audit-state').textContent = data.audit ? 'New lines appear as they are written (the last 200 are kept).' : 'The audit log is off (audit.enabled).';
      } else VIEWS[event]?.(data);
    },
    onState(state, detail) {
      if (state === 'denied') signIn(detail);
      else if (state === 'retrying') $('status').textContent = `Reconnecting (${detail})…`;
    },
  });
}

function signIn(message) {
  stream?.close();
  $('panels').hidden = true;
  $('login').hidden = false;
  $('signout').hidden = true;
  $('status').textContent = 'Not signed in';
  $('login-error').textContent = sessionStorage.getItem(TOKEN) ? `The token was refused: ${message}` : '';
  sessionStorage.removeItem(TOKEN);
  $('token').focus();
}

/**
 * A header carries Latin-1 alone: a token with any other character (an ellipsis or a typographic quote
 * pasted with it) made every request throw in the browser before it went out, so no refusal ever came
 * back, and the page, kept in the tab's storage, said "Reconnecting" for good, even after a reload.
 */
const BAD_CHAR = /[^\x20-\x7e\xa0-\xff]/u;

$('login-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const token = $('token').value.trim();
  const bad = BAD_CHAR.exec(token);
  if (bad) {
    $('login-error').textContent = `The token holds a character no header can carry (U+${bad[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0')} at position ${bad.index + 1}): paste it again.`;
    return;
  }
  sessionStorage.setItem(TOKEN, token);
  $('token').value = '';
  connect();
});
$('signout').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN);
  signIn();
});
$('reload-button').addEventListener('click', (e) => act(e.currentTarget, $('reload-result'), async () => (renderReload(await api('POST', '/reload')), undefined)));
setInterval(refreshAges, 5000);
connect();
