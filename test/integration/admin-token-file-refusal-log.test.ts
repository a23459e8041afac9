// admin.tokenFile unreadable (a Secret being replaced, a volume remounted) or holding too short a token:
// every admin request is refused (500) until it can be read. Each such request wrote two log lines of its
// own (the file's warning and "admin API route failed" with a stack), whoever sent it: with no token at
// all, a scanner or a page open in a browser could write the log as fast as it sent requests, as refused
// requests could before their warnings were bounded (admin-refusal-log). Real gateway, real port.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { rmSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { tokenFileGateway, type TokenFileGateway } from '../helpers/file-gateway.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'admin-token-from-a-file-0123456789-abcdef';
const SENT = 400;

function send(url: URL): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', agent: false }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('requests refused while admin.tokenFile cannot be used, in the log', () => {
  let s: TokenFileGateway;
  const lines: string[] = [];
  before(async () => (s = await tokenFileGateway('swb-admin-token-log-', `${TOKEN}\n`, lines)));
  after(() => s?.close());

  const admin = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.component === 'admin' || /tokenFile|admin API/.test(String(l.msg)));
  /** The lines a refusal wrote (its own warning or error), and the refusals counted in `dropped` lines. */
  const written = () => admin().filter((l) => typeof l.dropped !== 'number').length;
  const dropped = () => admin().reduce((n, l) => n + (typeof l.dropped === 'number' ? l.dropped : 0), 0);

  for (const [what, spoil] of [
    ['missing', () => rmSync(s.file)],
    ['holding a short token', () => writeFileSync(s.file, 'admin\n')],
  ] as const) {
    it(`writes a bounded number of lines for requests without a token while the file is ${what}, and counts the rest`, async () => {
      lines.length = 0;
      spoil();
      const url = new URL('/sessions', s.gw.app.adminUrl!);
      for (let i = 0; i < SENT; i++) assert.equal(await send(url), 500);
      await until('every refusal written or counted', () => written() + dropped() >= SENT);
      assert.ok(written() < SENT, `${written()} lines for ${SENT} requests`);
      const status = (await s.sessions(TOKEN)).status;
      assert.equal(status, 500, 'still refused until the file is usable');
      writeFileSync(s.file, `${TOKEN}\n`);
      assert.equal((await s.sessions(TOKEN)).status, 200, 'and taken again once it is');
    });
  }
});
