// The attacking side of the descriptor-limit acceptance test, in a process of its own: 2,000 sockets
// handled in the test's own process delayed its MCP client's first bytes on a fresh connection by
// hundreds of milliseconds (one event loop for both), and a connection that silent over the
// unauthenticated ceiling is rightly closed by the gateway, so a client lost a call to its own
// attacker's load (seen once in CI). A real client does not share its event loop with a flood.
//
// Usage (as a child with an IPC channel): node --import tsx idle-attack.ts <port> <json>, json being
// { slots: [{ head: string (what a connection writes after connecting, '' for nothing), count: number }],
//   budget: number (connections opened in all, at most), pauseMs: number (before a slot reopens) }.
// Reports { opened, answered401 } over IPC every 100 ms; on the message 'stop' it closes every
// connection, sends a last report and exits.
import { attacker, type AttackSeen } from './idle-attacker.js';

const port = Number(process.argv[2]);
const { slots: kinds, budget, pauseMs } = JSON.parse(process.argv[3]!) as { slots: Array<{ head: string; count: number }>; budget: number; pauseMs: number };
const stop = { now: false, budget };
const seen: AttackSeen = { opened: 0, answered401: 0 };

const report = setInterval(() => process.send?.(seen), 100);
const slots = kinds.flatMap(({ head, count }) => Array.from({ length: count }, () => attacker(port, head, stop, seen, pauseMs)));
process.on('message', async (m) => {
  if (m !== 'stop') return;
  stop.now = true;
  await Promise.all(slots);
  clearInterval(report);
  process.send?.(seen, () => process.exit(0));
});
// The test process gone (killed, failed) takes the attack with it.
process.on('disconnect', () => process.exit(0));
