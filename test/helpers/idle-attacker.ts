import { connect } from 'node:net';

/** What an attack run counts: connections opened, and those the gateway answered 401 before closing. */
export interface AttackSeen {
  opened: number;
  answered401: number;
}

/**
 * One attacker slot: opens a connection, writes `head` (or nothing), and opens another `pauseMs` (a
 * second) after the gateway closed it (paced, so a test measures held connections rather than a
 * connection flood); until `stop.now`, at most `stop.budget` connections across the slots sharing it.
 */
export async function attacker(port: number, head: string, stop: { now: boolean; budget: number }, seen: AttackSeen, pauseMs = 1000): Promise<void> {
  while (!stop.now && stop.budget-- > 0) {
    seen.opened++;
    await new Promise<void>((done) => {
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
      s.on('data', (b: Buffer) => (data += b.toString()));
      s.on('error', () => {});
      s.on('close', end);
    });
    if (!stop.now) await new Promise((r) => setTimeout(r, pauseMs)); // attacker pacing, not a wait for an event
  }
}
