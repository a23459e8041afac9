// The memory store's pending consent records (flows and OAuth states) are bounded without letting one
// principal push out another's: it used to drop the oldest record at 100,000, whoever's it was, so a
// user whose calls asked for consent without end (a loop, or on purpose) evicted every other user's
// pending consent link. Now each principal has a cap of their own, expired records go first, and a store
// full of live records refuses new ones instead of dropping pending ones. In Redis the records had no
// per-user bound at all (only their TTL and Redis's memory): the same cap now holds there, across
// replicas, counted and added in one step.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { GatewayError } from '../../../src/errors.js';
import { ConsentFlows } from '../../../src/upstream/consent-flows.js';
import { PENDING_PER_USER } from '../../../src/upstream/pending-records.js';
import { RedisVaultStore } from '../../../src/upstream/redis-vault-store.js';
import { MemoryVaultStore } from '../../../src/upstream/vault-store.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { ALICE, consentRig } from '../../helpers/refresh-rig.js';
import { until } from '../../helpers/wait.js';

const user = (subject: string) => ({ issuer: 'https://issuer.test', subject, tenant: 'acme' });
const [alice, bob, carol, mallory] = ['alice', 'bob', 'carol', 'mallory'].map(user) as [ReturnType<typeof user>, ReturnType<typeof user>, ReturnType<typeof user>, ReturnType<typeof user>];
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as Error);

describe('pending consent records in memory', () => {
  it("one principal opening consent links without end is refused at its cap; another's pending link stays usable", async () => {
    const flows = new ConsentFlows(randomBytes(32), new MemoryVaultStore(), 600_000);
    const alices = await flows.create(alice, 'tickets');
    let made = 0;
    let refused: Error | undefined;
    // More than the store's global bound: without a cap of their own, mallory's links pushed alice's out.
    for (let i = 0; i <= 100_000 && !refused; i++) {
      refused = await refusal(flows.create(mallory, 'tickets'));
      if (!refused) made++;
    }
    assert.deepEqual({ ...(await flows.take(alices)), at: 0 }, { user: alice, upstream: 'tickets', at: 0 }, `alice's link still works (mallory made ${made})`);
    assert.ok(refused instanceof GatewayError, 'refused with a coded error');
    assert.equal(refused.code, 'SWB_RATE_LIMITED');
    assert.equal(made, PENDING_PER_USER);
    assert.ok(await flows.create(bob, 'tickets'), 'others still get links');
  });

  it('a link taken (or its state completed) frees its place; expired ones do not count', async () => {
    const store = new MemoryVaultStore();
    const flows = new ConsentFlows(randomBytes(32), store, 600_000);
    const refs: string[] = [];
    for (let i = 0; i < PENDING_PER_USER; i++) refs.push(await flows.create(mallory, 'tickets'));
    assert.ok(await refusal(flows.create(mallory, 'tickets')));
    const flow = (await flows.take(refs[0]!))!;
    const s = await flows.begin(flow); // the flow became a state: still one pending
    assert.ok(await refusal(flows.create(mallory, 'tickets')));
    assert.equal(typeof (await flows.complete(s.state, s.browser)), 'object');
    assert.ok(await flows.create(mallory, 'tickets'), 'the completed state freed a place');

    const brief = new ConsentFlows(randomBytes(32), new MemoryVaultStore(), 1);
    for (let i = 0; i < PENDING_PER_USER; i++) await brief.create(mallory, 'tickets');
    await sleep(5);
    assert.ok(await brief.create(mallory, 'tickets'), 'expired links do not count');
  });

  it('a store full of live records refuses a new one and keeps the pending ones; expired records are dropped first', async () => {
    const store = new MemoryVaultStore({ maxOnce: 4 });
    const flows = new ConsentFlows(randomBytes(32), store, 600_000);
    const pending = [await flows.create(alice, 'tickets'), await flows.create(alice, 'notes'), await flows.create(bob, 'tickets'), await flows.create(bob, 'notes')];
    const full = await refusal(flows.create(carol, 'tickets'));
    assert.ok(full, 'refused');
    assert.match(full.message, /pending/);
    for (const ref of pending) assert.ok(await flows.take(ref), 'every pending link still works');

    const expiring = new MemoryVaultStore({ maxOnce: 2 });
    const brief = new ConsentFlows(randomBytes(32), expiring, 1);
    await brief.create(alice, 'tickets');
    await brief.create(bob, 'tickets');
    await sleep(5);
    const lasting = new ConsentFlows(randomBytes(32), expiring, 600_000);
    assert.ok(await lasting.take(await lasting.create(carol, 'tickets')), 'room made of the expired ones');
  });

  it('the user told: a call past the cap answers SWB_RATE_LIMITED saying why and when to retry, not a new link', async () => {
    const rig = consentRig('http://127.0.0.1:9/token', new MemoryVaultStore());
    try {
      for (let i = 0; i < PENDING_PER_USER; i++) assert.equal((await rig.consent.required(ALICE, 'tickets', 'not-linked')).code, 'SWB_UPSTREAM_CONSENT_REQUIRED');
      const err = await rig.consent.required(ALICE, 'tickets', 'not-linked');
      assert.equal(err.code, 'SWB_RATE_LIMITED', err.message);
      assert.match(err.message, new RegExp(`${PENDING_PER_USER} consent links pending`));
      assert.match(err.message, /open one of the links you were given/);
      assert.ok(typeof err.details?.retryAfterSeconds === 'number' && err.details.retryAfterSeconds > 0);
    } finally {
      await rig.close();
    }
  });
});

describe('pending consent records in Redis', () => {
  let redis: TestRedis;
  let raw: Redis;
  let replicas: Redis[];
  let n = 0;
  /** Two replicas' stores on one Redis, under a prefix of the test's own. */
  const stores = () => {
    const prefix = `cf${++n}:`;
    return { prefix, a: new RedisVaultStore(replicas[0]!, prefix), b: new RedisVaultStore(replicas[1]!, prefix) };
  };
  const flowKeys = (prefix: string) => raw.keys(`${prefix}vault:flow:*`);

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    replicas = [new Redis(redis.url), new Redis(redis.url)];
  });
  after(async () => {
    for (const c of [raw, ...replicas]) c?.disconnect();
    await redis?.stop();
  });

  it("one principal opening consent links without end, on two replicas at once, is refused at its cap; another's pending link stays usable", async () => {
    const { prefix, a, b } = stores();
    const key = randomBytes(32);
    const [onA, onB] = [new ConsentFlows(key, a, 600_000), new ConsentFlows(key, b, 600_000)];
    const alices = await onA.create(alice, 'tickets');
    // All at once, half through each replica: a count read and then written in two steps lets more through.
    const tries = await Promise.all(Array.from({ length: 4 * PENDING_PER_USER }, (_, i) => refusal((i % 2 ? onA : onB).create(mallory, 'tickets'))));
    const refused = tries.filter((e) => e !== undefined);
    assert.equal(tries.length - refused.length, PENDING_PER_USER, 'made');
    for (const e of refused) {
      assert.ok(e instanceof GatewayError, e.message);
      assert.equal(e.code, 'SWB_RATE_LIMITED');
      assert.ok(typeof e.details?.retryAfterSeconds === 'number' && e.details.retryAfterSeconds > 0 && e.details.retryAfterSeconds <= 600);
    }
    assert.equal((await flowKeys(prefix)).length, PENDING_PER_USER + 1, "Redis holds mallory's 32 and alice's one");
    assert.deepEqual({ ...(await onB.take(alices)), at: 0 }, { user: alice, upstream: 'tickets', at: 0 }, "alice's link still works");
    assert.ok(await onA.create(bob, 'tickets'), 'others still get links');
  });

  it('a link taken (or its state completed) frees its place, on any replica; expired ones do not count', async () => {
    const { a, b } = stores();
    const key = randomBytes(32);
    const [onA, onB] = [new ConsentFlows(key, a, 600_000), new ConsentFlows(key, b, 600_000)];
    const refs: string[] = [];
    for (let i = 0; i < PENDING_PER_USER; i++) refs.push(await onA.create(mallory, 'tickets'));
    assert.ok(await refusal(onB.create(mallory, 'tickets')));
    const flow = (await onB.take(refs[0]!))!;
    const s = await onB.begin(flow); // the flow became a state: still one pending
    assert.ok(await refusal(onA.create(mallory, 'tickets')));
    assert.equal(typeof (await onA.complete(s.state, s.browser)), 'object');
    assert.ok(await onA.create(mallory, 'tickets'), 'the completed state freed a place');

    const expiring = stores();
    const brief = new ConsentFlows(key, expiring.a, 2_000);
    for (let i = 0; i < PENDING_PER_USER; i++) await brief.create(carol, 'tickets');
    assert.ok(await refusal(brief.create(carol, 'tickets')));
    await until("carol's links expired", async () => (await flowKeys(expiring.prefix)).length === 0);
    assert.deepEqual(await raw.keys(`${expiring.prefix}vault:pending:*`), [], 'her count expired with them');
    assert.ok(await new ConsentFlows(key, expiring.b, 600_000).create(carol, 'tickets'), 'expired links do not count');
  });

  it('the user told: a call past the cap answers SWB_RATE_LIMITED saying why and when to retry, not a new link', async () => {
    const { a } = stores();
    const rig = consentRig('http://127.0.0.1:9/token', a);
    try {
      for (let i = 0; i < PENDING_PER_USER; i++) assert.equal((await rig.consent.required(ALICE, 'tickets', 'not-linked')).code, 'SWB_UPSTREAM_CONSENT_REQUIRED');
      const err = await rig.consent.required(ALICE, 'tickets', 'not-linked');
      assert.equal(err.code, 'SWB_RATE_LIMITED', err.message);
      assert.match(err.message, new RegExp(`${PENDING_PER_USER} consent links pending`));
      assert.ok(typeof err.details?.retryAfterSeconds === 'number' && err.details.retryAfterSeconds > 0);
    } finally {
      await rig.close();
    }
  });
});
