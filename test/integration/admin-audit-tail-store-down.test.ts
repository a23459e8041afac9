// The console's audit tail while Redis is down: with Redis on and the audit log on, an open console has
// its replica read the other replicas' audit lines once a second (a question on the admin channel). With
// Redis gone that question fails at once (no offline queue); the failure must be logged, not left as an
// unhandled rejection, which ended the whole gateway process (every client's session with it).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { events } from '../helpers/admin-events.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'audit-tail-store-down-token-0123456789';

describe("the console's audit tail while Redis is down", { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let a: Replica;
  let log = '';

  before(async () => {
    redis = await startRedis();
    a = await startReplica('tail', redis.url, 'shared', `admin: { enabled: true, port: 0, token: "${TOKEN}" }\naudit: { enabled: true }\n`);
    a.child.stdout!.on('data', (b: Buffer) => (log += b.toString()));
  });
  after(async () => {
    a?.child.kill('SIGKILL');
    await redis?.stop();
  });

  it('keeps the gateway running, logs that the other replicas cannot be read, and recovers with Redis', async () => {
    const { status, stream } = await events(a.admin!, TOKEN);
    assert.equal(status, 200);
    try {
      await until('the hello event', () => stream!.seen.some((e) => e.event === 'hello'));
      assert.equal(stream!.seen.find((e) => e.event === 'hello')!.data.audit, true, 'the audit tail is on');
      await redis.stop();
      let exited = false;
      void a.exited.then(() => (exited = true));
      await until('the failed read logged, or the process gone', () => exited || log.includes('audit lines of the other replicas cannot be read'), 20_000);
      assert.equal(exited, false, `the gateway process is still running:\n${log.slice(-2000)}`);
      await redis.restart();
      await until('the recovery logged', () => exited || log.includes('audit lines of the other replicas can be read again'), 20_000);
      assert.equal(exited, false, `the gateway process is still running:\n${log.slice(-2000)}`);
      assert.equal((log.match(/audit lines of the other replicas cannot be read/g) ?? []).length, 1, 'said once per outage, not every second');
    } finally {
      stream!.close();
    }
  });
});
