// A 2026-07-28 call is one call, audited once when it ends (README, Audit log). A 2025 upstream that refuses
// it with -32042 (URLElicitationRequired: open these URLs first) makes it a URL round, after which the
// gateway makes the upstream call again (found by a review): each run was audited, the -32042 as a call
// that failed ("error") while the call went on, so a call made again had two lines, one per round more.
// Now the call's line is the last run's, or, ended in its round (declined, abandoned), written then. A
// 2025-11-25 session's -32042, which is the call's answer, keeps its one line. A real gateway in front of
// a stdio fixture whose needs_url always answers -32042 and whose url_done answers.
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post, type Json } from '../helpers/http-edge.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { waitFor } from '../helpers/wait.js';

const CAPS = { elicitation: { form: {}, url: {} } };

describe('audit lines of calls an upstream refused with -32042', { timeout: 60_000 }, () => {
  let dir: string;
  let gw: RunningGateway;
  const logLines: string[] = [];
  const audited = (): Json[] => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit');
  const show = (lines: Json[]) => lines.map((l) => JSON.stringify(l)).join('\n');

  before(async () => {
    // The fixture's needs_url, except that it answers once its URL was "visited" (its second call).
    dir = mkdtempSync(join(tmpdir(), 'swb-url-audit-'));
    const server = join(dir, 'server.mjs');
    writeFileSync(
      server,
      `import { createInterface } from 'node:readline';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
// needs_url and refused_url always answer -32042; the others answer once their URL was visited.
const TOOLS = ['needs_url', 'once_url', 'counted_url', 'refused_url'].map((name) => ({ name, inputSchema: { type: 'object' } }));
const visited = new Set();
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined || m.method === undefined) return;
  if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } } });
  if (m.method === 'tools/list') return send({ jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } });
  if (m.method !== 'tools/call') return send({ jsonrpc: '2.0', id: m.id, result: {} });
  const once = m.params.name !== 'needs_url' && m.params.name !== 'refused_url';
  if (once && visited.has(m.params.name)) return send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'done' }] } });
  visited.add(m.params.name);
  send({ jsonrpc: '2.0', id: m.id, error: { code: -32042, message: 'Open a URL first.', data: { elicitations: [{ mode: 'url', elicitationId: 'e1', url: 'https://example.com/e1', message: 'Approve' }] } } });
});
`,
    );
    const upstream = { name: 'url', transport: 'stdio' as const, command: process.execPath, args: [server], sandbox: 'none' as const, sharing: 'shared' as const };
    gw = await startGateway({ audit: { enabled: true }, pinning: { mode: 'off' }, upstreams: [upstream], endpoints: [{ path: '/mcp', upstreams: ['url'] }] }, { logLines });
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('2026-07-28: a call made again once its URL was visited has one line, the answered run\'s', async () => {
    const before = audited().length;
    const params = { name: 'once_url', arguments: {} };
    const round = inputRound(await modernPost(gw.url(), 'tools/call', params, { caps: CAPS }));
    const answer = await modernPost(gw.url(), 'tools/call', { ...params, requestState: round.state, inputResponses: { [round.key]: { action: 'accept' } } }, { caps: CAPS });
    assert.equal(answer.body.result?.content?.[0]?.text, 'done', JSON.stringify(answer.body));
    const lines = audited().slice(before);
    assert.equal(lines.length, 1, show(lines));
    assert.equal(lines[0]!.outcome, 'ok', show(lines));
  });

  it('2026-07-28: a call whose URL the user declined has one line, an error', async () => {
    const before = audited().length;
    const params = { name: 'needs_url', arguments: {} };
    const round = inputRound(await modernPost(gw.url(), 'tools/call', params, { caps: CAPS }));
    const again = inputRound(await modernPost(gw.url(), 'tools/call', { ...params, requestState: round.state, inputResponses: { [round.key]: { action: 'accept' } } }, { caps: CAPS }));
    const last = await modernPost(gw.url(), 'tools/call', { ...params, requestState: again.state, inputResponses: { [again.key]: { action: 'decline' } } }, { caps: CAPS });
    assert.equal(last.body.error?.data?.code, 'SWB_URL_ELICITATION_DECLINED', JSON.stringify(last.body));
    assert.ok(await waitFor(() => audited().length > before, { timeoutMs: 2000 }));
    const lines = audited().slice(before);
    assert.equal(lines.length, 1, show(lines));
    assert.equal(lines[0]!.name, 'needs_url');
    assert.equal(lines[0]!.decision, 'allow');
    assert.equal(lines[0]!.outcome, 'error', show(lines));
  });

  // Found by a review: the metrics counted each run as the audit did, the -32042 as a tools/call that
  // failed while the call went on: a call made once its URL was visited was an error and an ok.
  it('2026-07-28: a call with a URL round is one request in the metrics, counted when it ends', async () => {
    const params = { name: 'counted_url', arguments: {} };
    const round = inputRound(await modernPost(gw.url(), 'tools/call', params, { caps: CAPS }));
    const answer = await modernPost(gw.url(), 'tools/call', { ...params, requestState: round.state, inputResponses: { [round.key]: { action: 'accept' } } }, { caps: CAPS });
    assert.equal(answer.body.result?.content?.[0]?.text, 'done', JSON.stringify(answer.body));
    // Declined in its second URL round (its first accepted): one call that failed.
    const refused = { name: 'refused_url', arguments: {} };
    const first = inputRound(await modernPost(gw.url(), 'tools/call', refused, { caps: CAPS }));
    const second = inputRound(await modernPost(gw.url(), 'tools/call', { ...refused, requestState: first.state, inputResponses: { [first.key]: { action: 'accept' } } }, { caps: CAPS }));
    await modernPost(gw.url(), 'tools/call', { ...refused, requestState: second.state, inputResponses: { [second.key]: { action: 'decline' } } }, { caps: CAPS });
    const calls = async () => {
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      return text.split('\n').filter((l) => l.startsWith('switchboard_tool_calls_total{') && /tool="(counted|refused)_url"/.test(l)).sort();
    };
    assert.ok(await waitFor(async () => (await calls()).some((l) => l.includes('refused_url')), { timeoutMs: 2000 }), (await calls()).join('\n'));
    assert.deepEqual(await calls(), ['switchboard_tool_calls_total{tool="counted_url",outcome="ok"} 1', 'switchboard_tool_calls_total{tool="refused_url",outcome="error"} 1']);
  });

  it("2025-11-25: the -32042 is the call's answer, with its one line", async () => {
    const before = audited().length;
    const s = await openSession(gw, '2025-11-25', CAPS);
    const res = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'needs_url', arguments: {} } }, { sid: s.sid, version: '2025-11-25' });
    assert.match(await res.text(), /-32042/);
    assert.ok(await waitFor(() => audited().length > before, { timeoutMs: 2000 }));
    const lines = audited().slice(before);
    assert.equal(lines.length, 1, show(lines));
    assert.equal(lines[0]!.outcome, 'error');
  });
});
