// The attacking side of the descriptor-limit acceptance test, in a process of its own: 2,000 sockets
// handled in the test's own process delayed its MCP client's first bytes on a fresh connection by
// hundreds of milliseconds (one event loop for both), and a connection that silent over the
// unauthenticated ceiling is rightly closed by the gateway, so a client lost a call to its own
// attacker's load (seen once in CI). A real client does not share its event loop with a flood.
//
// Usage (as a child with an IPC channel): node idle-attack.mjs <port> <json>, json being
// { slots: [{ head: string (what a connection writes after connecting, '' for nothing), count: number }],
//   budget: number (connections opened in all, at most), pauseMs: number (before a slot reopens) }.
// Reports { opened, answered401 } over IPC every 100 ms; on the message 'stop' it closes every
// connection, sends a last report and exits.
import { connect } from 'node:net';

const port = Number(process.argv[2]);
const { slots: kinds, budget, pauseMs } = JSON.parse(process.argv[3]);
const stop = { now: false, budget };
const seen = { opened: 0, answered401: 0 };

/** One slot: a connection that writes its head (or nothing), reopened `pauseMs` after the gateway closes it. */
async function attacker(head) {
  while (!stop.now && stop.budget-- > 0) {
    seen.opened++;
    await new Promise((done) => {
      const s = connect(port, '127.0.0.1');
      let data = '';
      const end = () => {
        clearInterval(poll);
        if (/^HTTP\/1\.1 401 /.test(data)) seen.answered401++;
        s.destroy();
        done();
      };
      const poll = setInterval(() => stop.now && end(), 200);
      s.on('connect', () => head && s.write(head));
      s.on('data', (b) => (data += b.toString()));
      s.on('error', () => {});
      s.on('close', end);
    });
    if (!stop.now) await new Promise((r) => setTimeout(r, pauseMs)); // attacker pacing, not a wait for an event
  }
}

const report = setInterval(() => process.send?.(seen), 100);
const slots = kinds.flatMap(({ head, count }) => Array.from({ length: count }, () => attacker(head)));
process.on('message', async (m) => {
  if (m !== 'stop') return;
  stop.now = true;
  await Promise.all(slots);
  clearInterval(report);
  process.send?.(seen, () => process.exit(0));
});
// The test process gone (killed, failed) takes the attack with it.
process.on('disconnect', () => process.exit(0));
