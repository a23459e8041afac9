// Finding a replica gone from Redis's own evidence (no subscriber on its inbox, no connection with its
// name), against a real redis-server: a replica whose links dropped and came back (CLIENT KILL here, a
// network blip in production) is alive again once the finding's time has passed, not dead for ever.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import { ReplicaDeaths } from '../../src/cluster/replica-deaths.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const PREFIX = 'deaths-test:';

describe('ReplicaDeaths', { timeout: 20_000 }, () => {
  let redis: TestRedis;
  const opened: Redis[] = [];
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const r of opened) r.disconnect();
    await redis?.stop();
  });

  it('a replica whose connections were killed is gone while they are down, and alive again after they reconnect', async () => {
    const logger = createLogger('silent');
    const name = ReplicaDeaths.connectionName(PREFIX, 'a');
    // a's links come back 1.5 s after they drop (not the gateway's 100 ms): b's look happens while they are down.
    const slowBack = { connectionName: name, retryStrategy: () => 1500 };
    const aMain = connectRedis(redis.url, logger, undefined, slowBack);
    const aSub = connectRedis(redis.url, logger, undefined, { enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined, enableReadyCheck: false, ...slowBack });
    const b = connectRedis(redis.url, logger);
    const admin = new Redis(redis.url);
    opened.push(aMain, aSub, b, admin);
    await aSub.subscribe(ReplicaDeaths.inbox(PREFIX, 'a'));
    await new Promise((resolve) => (b.status === 'ready' ? resolve(undefined) : b.once('ready', resolve)));
    const deaths = new ReplicaDeaths(b, PREFIX, logger, 600);
    assert.deepEqual([...(await deaths.gone(['a']))], []);

    // Both of a's links drop at once; it is found gone before it reconnects.
    const ids = [...String(await admin.client('LIST')).matchAll(/id=(\d+) .* name=(\S+)/g)].filter((m) => m[2] === name).map((m) => m[1]!);
    assert.equal(ids.length, 2);
    for (const id of ids) await admin.client('KILL', 'ID', id);
    assert.deepEqual([...(await deaths.gone(['a']))], ['a']);
    assert.equal(deaths.knownGone('a'), true);

    // a reconnects and listens again: once the finding's time is over, it is alive to b.
    await waitFor(async () => Number(((await b.pubsub('NUMSUB', ReplicaDeaths.inbox(PREFIX, 'a'))) as unknown[])[1]) === 1, { timeoutMs: 10_000 });
    await sleep(700);
    assert.equal(deaths.knownGone('a'), false, 'a replica judged gone once stays gone for ever');
    assert.deepEqual([...(await deaths.gone(['a']))], []);
  });

  // Redis takes as a connection's name only characters from '!' to '~' and refuses any other (CLIENT
  // SETNAME), which ioredis let pass in silence: with a key prefix of other characters no replica's
  // connection carried its name, so one whose subscriber was down a moment (its command link open, its
  // heartbeat current) was found gone, and its sessions taken over while it still served them.
  it('a key prefix of characters Redis refuses in a connection name still names the connections', async () => {
    const logger = createLogger('silent');
    const prefix = 'équipe ü\t:';
    const name = ReplicaDeaths.connectionName(prefix, 'a');
    const aMain = connectRedis(redis.url, logger, undefined, { connectionName: name });
    const b = connectRedis(redis.url, logger);
    opened.push(aMain, b);
    await Promise.all([aMain, b].map((r) => new Promise((resolve) => (r.status === 'ready' ? resolve(undefined) : r.once('ready', resolve)))));
    assert.ok(String(await b.client('LIST')).split('\n').some((l) => l.includes(` name=${name} `)), `no connection named ${name}`);
    // a's inbox has no subscriber (its subscriber reconnecting), its command link is open: not gone.
    assert.deepEqual([...(await new ReplicaDeaths(b, prefix, logger, 600).gone(['a']))], []);
  });
});
