// A config problem quotes the value as the file wrote it (http-url.ts, WRITTEN_VALUE), and problems go to
// the log, the admin API's POST /reload answer and the console. A URL written out with its credentials
// (https://user:PASSWORD@host, ?api_key=…) and a typo that makes it no URL was quoted whole, while GET
// /config redacts exactly those parts. Real gateway from a real file, reloaded through the admin API.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';

const TOKEN = 'admin-token-for-problem-tests-0123456789-abc';
const PASSWORD = 'url-password-never-shown';
const QUERY_KEY = 'url-query-key-never-shown';

function doc(extra: Record<string, unknown>[] = []): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: 'info' },
    admin: { enabled: true, port: 0, token: TOKEN },
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }, ...extra],
    endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
  };
}

describe('a reload refused for a URL written with its credentials', () => {
  let fg: FileGateway;
  const lines: string[] = [];

  before(async () => {
    fg = await fileGateway('swb-problem-url-', doc(), { logLines: lines });
  });
  after(async () => {
    await fg?.close();
  });

  it('names the field and the host, never the password or the query', async () => {
    // A typo in the port: no URL, so the value is quoted.
    fg.write(doc([{ name: 'remote', transport: 'streamable-http', url: `https://ops:${PASSWORD}@remote.test:44x/mcp?api_key=${QUERY_KEY}` }]));
    const res = await fetch(new URL('/reload', fg.app.adminUrl), { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await res.text();
    assert.equal(res.status, 200);
    const body = JSON.parse(text) as { result: string; problems: string[] };
    assert.equal(body.result, 'invalid');
    const problem = body.problems.find((p) => p.startsWith('upstreams[1].url: '));
    assert.ok(problem, `the url is named: ${body.problems.join('; ')}`);
    assert.match(problem, /remote\.test:44x\/mcp/, 'where the typo is stays readable');
    assert.ok(!text.includes(PASSWORD), `no password in the answer: ${problem}`);
    assert.ok(!text.includes(QUERY_KEY), `no query key in the answer: ${problem}`);
    const logged = lines.filter((l) => l.includes('config reload refused'));
    assert.ok(logged.length > 0, 'the refusal is logged');
    assert.ok(!logged.some((l) => l.includes(PASSWORD) || l.includes(QUERY_KEY)), `nor in the log: ${logged.join('\n')}`);
  });
});
