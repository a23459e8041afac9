// admin.tokenFile is read on every request (a rotated file takes effect at once). A file that cannot be
// read refuses every admin request without telling the caller where the server keeps it: the answer had
// the error's text, with the file's path (found by a review). A console's /events stream open when the file
// goes: its once-a-minute re-check threw out of the tick timer, an unhandled rejection that ended the whole
// gateway (exit code 1) instead of that one stream (found by a review).
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { events } from '../helpers/admin-events.js';
import { tokenFileGateway, type TokenFileGateway } from '../helpers/file-gateway.js';
import { moveClockAhead, restoreClock, until } from '../helpers/wait.js';

const TOKEN = 'admin-token-from-a-file-0123456789-abcdef';

describe('admin.tokenFile that goes missing', () => {
  let s: TokenFileGateway;
  const logLines: string[] = [];
  before(async () => (s = await tokenFileGateway('swb-admin-token-', `${TOKEN}\n`, logLines)));
  after(() => s?.close());

  it('refuses every request, and no answer names the file', async () => {
    assert.equal((await s.sessions(TOKEN)).status, 200, 'the token from the file');
    rmSync(s.file);
    for (const token of [TOKEN, 'a-guess']) {
      const r = await s.sessions(token);
      const text = await r.text();
      assert.equal(r.status, 500, text);
      assert.ok(!text.includes(s.dir), `the answer names the file: ${text}`);
      assert.match(text, /token file cannot be read/);
    }
  });

  it('ends an open console stream with denied 500 at its re-check, and the gateway keeps running', async () => {
    writeFileSync(s.file, `${TOKEN}\n`);
    const rejections: unknown[] = [];
    const record = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', record);
    const { status, stream } = await events(s.gw.app.adminUrl!, TOKEN);
    try {
      assert.equal(status, 200);
      await until('the views on connect', () => stream!.seen.some((e) => e.event === 'pins'));
      rmSync(s.file);
      // The stream is due for its re-check (once a minute); the tick timer runs on real time.
      moveClockAhead(61_000);
      await until('the stream to be denied', () => stream!.seen.some((e) => e.event === 'denied'));
      assert.deepEqual(stream!.seen.find((e) => e.event === 'denied')!.data, { status: 500, message: 'the admin API cannot check credentials: its token file cannot be read (see the gateway log)' });
      assert.ok(logLines.some((l) => l.includes('console stream ended: its credentials could not be checked')), 'a log line says why');
      assert.deepEqual(rejections, []);
      assert.equal((await fetch(s.gw.url('/healthz'))).status, 200, 'the gateway still answers');
    } finally {
      restoreClock();
      stream?.close();
      process.off('unhandledRejection', record);
    }
  });
});

// admin.token must be at least 32 characters (a config error otherwise), since the admin API may listen
// off loopback and nothing limits how often a caller guesses; a token file was taken whatever it held,
// so a Secret holding "admin" (or an empty one, which no request matched, silently) was the API's token.
describe('admin.tokenFile holding a token shorter than admin.token may be', () => {
  let s: TokenFileGateway;
  const logLines: string[] = [];
  before(async () => (s = await tokenFileGateway('swb-admin-token-short-', 'admin\n', logLines)));
  after(() => s?.close());

  it('is refused as a token at all: every request answered 500 and logged, until the file holds a long one', async () => {
    for (const content of ['admin\n', '\n']) {
      writeFileSync(s.file, content);
      const r = await s.sessions(content.trim() || 'x');
      const text = await r.text();
      assert.equal(r.status, 500, `${JSON.stringify(content)}: ${text}`);
      assert.match(text, /token file holds no usable token/);
      assert.ok(!text.includes(s.dir), `the answer names the file: ${text}`);
    }
    assert.ok(logLines.some((l) => l.includes('admin.tokenFile holds fewer than 32 characters')), 'a log line says why');
    writeFileSync(s.file, `${TOKEN}\n`);
    assert.equal((await s.sessions(TOKEN)).status, 200);
  });
});
