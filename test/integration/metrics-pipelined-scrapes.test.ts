// A client on the metrics port that pipelined HTTP/1.1 scrapes and never read the answers had every one
// of them rendered (node's server emits a request for each pipelined message at once) and the answers
// buffered in the process: one write of a few thousand `GET /metrics` made thousands of renders, and the
// scrapes of everyone else waited behind them (renders are one at a time). A connection now has one scrape
// rendered at a time, the next only once the previous answer is written, and one that pipelines more than
// a few unanswered requests is closed. Real listener on a real port, a raw socket, a counted render.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metrics } from '../../src/observability/metrics.js';
import { startMetricsServer } from '../../src/observability/metrics-server.js';
import type { Server } from 'node:http';
import { openRawSocket } from '../helpers/raw-socket.js';

const SCRAPE = 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
/** Far more renders than one connection may cause once bounded (a few), far fewer than the flood. */
const TOO_MANY = 64;

/** How many whole HTTP/1.1 answers `text` holds (Content-Length or chunked bodies). */
function completeAnswers(text: string): number {
  let n = 0;
  for (let rest = text; ; n++) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return n;
    const head = rest.slice(0, end);
    rest = rest.slice(end + 4);
    const length = /content-length: *(\d+)/i.exec(head);
    const bodyEnd = length ? Number(length[1]) : rest.indexOf('\r\n0\r\n\r\n') + 7;
    if ((length && rest.length < bodyEnd) || (!length && bodyEnd < 7)) return n;
    rest = rest.slice(bodyEnd);
  }
}

describe('pipelined scrapes on the metrics port', { timeout: 60_000 }, () => {
  let server: Server;
  let port: number;
  let renders = 0;
  let tooMany: () => void = () => {};
  before(async () => {
    const metrics = new Metrics(false, false);
    const render = metrics.render.bind(metrics);
    metrics.render = (accept) => {
      if (++renders > TOO_MANY) tooMany();
      return render(accept);
    };
    const m = await startMetricsServer(metrics, '127.0.0.1', 0, '/metrics');
    server = m.server;
    port = Number(new URL(m.address).port);
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('a client that pipelines thousands and never reads is closed after a few renders', async () => {
    renders = 0;
    const flood = await openRawSocket('127.0.0.1', port);
    flood.socket.pause(); // never read: the answers stay with the sender
    const closed = new Promise<'closed'>((r) => flood.socket.once('close', () => r('closed')));
    const flooded = new Promise<'rendered'>((r) => (tooMany = () => r('rendered')));
    flood.socket.write(SCRAPE.repeat(5000));
    const first = await Promise.race([closed, flooded]);
    flood.socket.destroy();
    assert.equal(first, 'closed', `the connection was closed before ${TOO_MANY} renders (renders: ${renders})`);
    assert.ok(renders <= 8, `a few renders at most, not one per pipelined request (renders: ${renders})`);
  });

  it('a client that pipelines a few scrapes and reads gets every answer, in order', async () => {
    const c = await openRawSocket('127.0.0.1', port);
    c.socket.write(SCRAPE + 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' + SCRAPE);
    await new Promise<void>((resolve, reject) => {
      c.socket.on('data', () => completeAnswers(c.received()) === 3 && resolve());
      c.socket.once('close', () => reject(new Error(`closed after: ${c.received().slice(0, 200)}`)));
    });
    c.socket.destroy();
    const statuses = c.received().match(/HTTP\/1\.1 \d+/g);
    assert.deepEqual(statuses, ['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
    assert.ok(c.received().indexOf('{"status":"ok"}') > c.received().indexOf('# HELP'), 'the health answer comes after the first scrape');
  });

  it('scrapes are answered on a new connection after the flood', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /# HELP/);
  });
});
