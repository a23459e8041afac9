import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisPinStore } from '../../../src/cluster/redis-pin-store.js';
import { createLogger } from '../../../src/observability/logger.js';
import { MemoryPinStore } from '../../../src/policy/memory-pin-store.js';
import { readPinFile, withPinFileLock, writePinFile } from '../../../src/policy/pin-file.js';
import { MAX_TOOLS_PER_UPSTREAM, type ApprovedPin, type Observation, type PinStore, type RejectedPin } from '../../../src/policy/pin-store.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { until } from '../../helpers/wait.js';

const H1 = '1'.repeat(64);
const H2 = '2'.repeat(64);
const H3 = '3'.repeat(64);

const dir = mkdtempSync(join(tmpdir(), 'swb-pins-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshFile = () => join(dir, `pins-${n++}`, 'pins.json');

/** Tables are null-prototype objects; strict deepEqual compares prototypes too. */
const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

/** One sighting, in a batch of its own. */
async function see(s: PinStore, upstream: string, tool: string, hash: string, summary: string, fixed: string | undefined, pinnedInConfig = fixed !== undefined): Promise<Observation> {
  return (await s.observe(upstream, [{ tool, hash, summary, fixed }], pinnedInConfig))[0]!;
}

const sight = (tool: string, hash = H1, fixed?: string) => ({ tool, hash, summary: `${tool} summary`, fixed });

/** "__proto__", "constructor" and "toString" were pinned at H1: each is held to its pin like any other name. */
async function expectOddNamesPinned(s: PinStore): Promise<void> {
  assert.deepEqual(Object.keys((await s.table(['u'])).u!).sort(), ['__proto__', 'constructor', 'toString']);
  for (const tool of ['__proto__', 'constructor', 'toString']) {
    assert.equal((await see(s, 'u', tool, H1, '', undefined)).approved, H1);
    const changed = await see(s, 'u', tool, H2, 'changed', undefined);
    assert.equal(changed.approved, H1, tool);
    assert.equal(changed.newChange, true, tool);
  }
  assert.equal(({} as Record<string, unknown>).approved, undefined);
}

/**
 * The sighting rules as one table of cases, run against every store below: the memory store (observeIn
 * in src/policy/pin-store.ts) and the Redis store (its Lua script) must agree case by case. Each case
 * gets a fresh, empty store that has been started.
 */
const SIGHTING_CASES: Array<[name: string, run: (s: PinStore) => Promise<void>]> = [
  [
    'keeps the hidden text found in a pending definition with it, through the table and a rejection; none: no member',
    async (s) => {
      const findings = [
        { kind: 'tag', path: 'description', count: 36 },
        { kind: 'bidi', path: 'inputSchema.properties.path.description', count: 2 },
      ];
      await s.observe('u', [sight('t'), sight('clean')], false);
      const [changed, plainChange] = await s.observe('u', [{ ...sight('t', H2), findings }, { ...sight('clean', H2), findings: undefined }], false);
      assert.deepEqual(changed!.pending?.findings, findings);
      assert.equal(plainChange!.pending && 'findings' in plainChange.pending, false);
      assert.deepEqual(plain((await s.table(['u'])).u!.t!.pending!.findings), findings);
      await s.reject('u', [{ tool: 't', hash: H2 }]);
      const after = (await s.table(['u'])).u!.t!.pending!;
      assert.equal(after.rejected, true);
      assert.deepEqual(plain(after.findings), findings);
      assert.equal('findings' in (await s.table(['u'])).u!.clean!.pending!, false);
    },
  ],
  [
    'pins at first sight, keeps a change pending once per hash, and forgets it when the approved definition returns',
    async (s) => {
      assert.deepEqual(await see(s, 'u', 't', H1, 'v1', undefined), { approved: H1, firstSight: true, newChange: false, pending: undefined, unrecorded: false });
      assert.deepEqual(await see(s, 'u', 't', H1, 'v1', undefined), { approved: H1, firstSight: false, newChange: false, pending: undefined, unrecorded: false });
      const c = await see(s, 'u', 't', H2, 'v2', undefined);
      assert.equal(c.approved, H1);
      assert.equal(c.newChange, true);
      assert.equal(c.pending?.hash, H2);
      assert.equal(c.pending?.summary, 'v2');
      assert.ok(!Number.isNaN(Date.parse(c.pending!.firstSeen)));
      // Seen again (another list, another replica): not a new change.
      assert.equal((await see(s, 'u', 't', H2, 'v2', undefined)).newChange, false);
      // A third definition replaces the pending one and is a change of its own.
      const c3 = await see(s, 'u', 't', H3, 'v3', undefined);
      assert.equal(c3.newChange, true);
      assert.equal(c3.pending?.hash, H3);
      // Back to the approved definition: nothing pending any more (a stale hash cannot be approved by mistake).
      assert.equal((await see(s, 'u', 't', H1, 'v1', undefined)).pending, undefined);
      assert.deepEqual(plain(await s.table(['u'])), { u: { t: { approved: H1 } } });
    },
  ],
  [
    'approves only the pending hash the operator saw, and announces it',
    async (s) => {
      const seen: Array<[ApprovedPin[], boolean]> = [];
      s.onApproved = (pins, report) => seen.push([pins, report]);
      await see(s, 'u', 't', H1, 'v1', undefined);
      await see(s, 'u', 't', H2, 'v2', undefined);
      assert.deepEqual(await s.approve('u', [{ tool: 't', hash: H3 }]), []);
      assert.deepEqual(await s.approve('u', [{ tool: 'missing', hash: H2 }]), []);
      const done = await s.approve('u', [{ tool: 't', hash: H2 }]);
      assert.deepEqual(done, [{ upstream: 'u', tool: 't', hash: H2, previous: H1, summary: 'v2' }]);
      await until('the approval to be announced', () => seen.length > 0); // Redis announces on a channel
      assert.deepEqual(seen, [[done, true]]);
      assert.deepEqual(plain(await s.table(['u'])), { u: { t: { approved: H2 } } });
      assert.deepEqual(await see(s, 'u', 't', H2, 'v2', undefined), { approved: H2, firstSight: false, newChange: false, pending: undefined, unrecorded: false });
    },
  ],
  [
    'rejects only the pending hash the operator saw; the flag stays while that hash is reported and goes with a new definition',
    async (s) => {
      const seen: Array<[RejectedPin[], boolean]> = [];
      s.onRejected = (pins, report) => seen.push([pins, report]);
      await see(s, 'u', 't', H1, 'v1', undefined);
      await see(s, 'u', 't', H2, 'v2', undefined);
      assert.deepEqual(await s.reject('u', [{ tool: 't', hash: H3 }]), [], 'not the pending hash');
      assert.deepEqual(await s.reject('u', [{ tool: 'missing', hash: H2 }]), []);
      const done = await s.reject('u', [{ tool: 't', hash: H2 }]);
      assert.deepEqual(done, [{ upstream: 'u', tool: 't', hash: H2, approved: H1, summary: 'v2' }]);
      await until('the rejection to be announced', () => seen.length > 0);
      assert.deepEqual(seen, [[done, true]]);
      assert.deepEqual(await s.reject('u', [{ tool: 't', hash: H2 }]), [], 'rejected once');
      const entry = (await s.table(['u'])).u!.t!;
      assert.equal(entry.approved, H1, 'still held to its pin');
      assert.equal(entry.pending?.rejected, true);
      // Reported again (another list): still rejected, not a new change.
      const again = await see(s, 'u', 't', H2, 'v2', undefined);
      assert.deepEqual([again.approved, again.newChange, again.pending?.rejected], [H1, false, true]);
      // Another definition is a change of its own, to review afresh; so is the rejected one coming back.
      const v3 = await see(s, 'u', 't', H3, 'v3', undefined);
      assert.deepEqual([v3.newChange, v3.pending?.hash, v3.pending?.rejected], [true, H3, undefined]);
      const back = await see(s, 'u', 't', H2, 'v2', undefined);
      assert.deepEqual([back.newChange, back.pending?.rejected], [true, undefined]);
      await s.reject('u', [{ tool: 't', hash: H2 }]);
      // The approved definition returns: nothing pending, rejected or not.
      assert.equal((await see(s, 'u', 't', H1, 'v1', undefined)).pending, undefined);
      assert.deepEqual(plain(await s.table(['u'])), { u: { t: { approved: H1 } } });
    },
  ],
  [
    'a rejected change (a new tool too) can still be approved by its hash',
    async (s) => {
      await s.observe('u', [sight('a')], false);
      await see(s, 'u', 'evil', H2, 'evil v1', undefined);
      assert.deepEqual(await s.reject('u', [{ tool: 'evil', hash: H2 }]), [{ upstream: 'u', tool: 'evil', hash: H2, approved: undefined, summary: 'evil v1' }]);
      assert.deepEqual(plain((await s.table(['u'])).u!.evil!.pending!.rejected), true);
      assert.deepEqual(await s.approve('u', [{ tool: 'evil', hash: H2 }]), [{ upstream: 'u', tool: 'evil', hash: H2, previous: undefined, summary: 'evil v1' }]);
      assert.deepEqual(plain((await s.table(['u'])).u!.evil), { approved: H2 });
    },
  ],
  [
    'never overrides a pin fixed in config: only a differing hash is kept, as pending',
    async (s) => {
      assert.deepEqual(await see(s, 'u', 't', H1, 'v1', H1), { approved: H1, firstSight: false, newChange: false, pending: undefined, unrecorded: false });
      assert.deepEqual(plain(await s.table(['u'])), {});
      const c = await see(s, 'u', 't', H2, 'v2', H1);
      assert.equal(c.approved, H1);
      assert.equal(c.newChange, true);
      assert.deepEqual(Object.keys((await s.table(['u'])).u!.t!), ['pending']);
      await see(s, 'u', 't', H1, 'v1', H1);
      assert.deepEqual(plain(await s.table(['u'])), {});
    },
  ],
  [
    'table() returns copies of the asked upstreams only',
    async (s) => {
      await see(s, 'a', 't', H1, '', undefined);
      await see(s, 'b', 't', H1, '', undefined);
      const t = await s.table(['a']);
      assert.deepEqual(Object.keys(t), ['a']);
      t.a!.t!.approved = H3;
      assert.equal((await s.table(['a'])).a!.t!.approved, H1);
    },
  ],
  [
    'the first list is the baseline; a name that appears later is pending, with no approved hash, until approved',
    async (s) => {
      const first = await s.observe('u', [sight('a'), sight('b'), sight('c')], false);
      assert.deepEqual(first.map((o) => o.firstSight), [true, true, true], 'every tool of the first list is pinned');
      const added = await see(s, 'u', 'evil', H2, 'evil v1', undefined);
      assert.deepEqual(added, { approved: undefined, firstSight: false, newChange: true, pending: added.pending, unrecorded: false });
      assert.equal(added.pending?.hash, H2);
      assert.equal((await see(s, 'u', 'evil', H2, 'evil v1', undefined)).newChange, false, 'reported once');
      assert.deepEqual(plain((await s.table(['u'])).u!.evil), { pending: plain(added.pending) });
      assert.deepEqual(await s.approve('u', [{ tool: 'evil', hash: H2 }]), [{ upstream: 'u', tool: 'evil', hash: H2, previous: undefined, summary: 'evil v1' }]);
      assert.equal((await see(s, 'u', 'evil', H2, 'evil v1', undefined)).approved, H2);
    },
  ],
  [
    'config pins count as pins: a tool the config does not name is a new tool from the start',
    async (s) => {
      const [pinned, other] = await s.observe('u', [sight('a', H1, H1), sight('b')], true);
      assert.equal(pinned!.approved, H1);
      assert.equal(other!.firstSight, false);
      assert.equal(other!.approved, undefined);
      assert.equal(other!.newChange, true);
    },
  ],
  [
    'tools named "__proto__" and "constructor" are pinned like any other',
    async (s) => {
      await s.observe('u', [sight('__proto__'), sight('constructor'), sight('toString')], false);
      await expectOddNamesPinned(s);
    },
  ],
  [
    `records at most ${MAX_TOOLS_PER_UPSTREAM} names per upstream; beyond that new names are not recorded`,
    async (s) => {
      const many = Array.from({ length: MAX_TOOLS_PER_UPSTREAM + 5 }, (_, i) => sight(`t${i}`));
      const obs = await s.observe('u', many, false);
      assert.equal(obs.filter((o) => o.firstSight).length, MAX_TOOLS_PER_UPSTREAM);
      assert.deepEqual(obs.at(-1), { approved: undefined, firstSight: false, newChange: false, pending: undefined, unrecorded: true });
      assert.equal((await see(s, 'u', 'later', H2, '', undefined)).unrecorded, true);
      assert.equal(Object.keys((await s.table(['u'])).u!).length, MAX_TOOLS_PER_UPSTREAM);
      // Known tools still change as before.
      assert.equal((await see(s, 'u', 't0', H2, '', undefined)).newChange, true);
    },
  ],
];

describe('MemoryPinStore: sighting rules', () => {
  for (const [name, run] of SIGHTING_CASES) it(name, () => run(new MemoryPinStore()));
});

describe('RedisPinStore: sighting rules', () => {
  let redis: TestRedis;
  const connections: Redis[] = [];
  let cases = 0;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of connections) c.disconnect();
    await redis?.stop();
  });

  /** A started store under a prefix of its own (so it starts empty), with the subscriber a gateway has. */
  async function redisStore(): Promise<PinStore> {
    const [command, subscriber] = [new Redis(redis.url), new Redis(redis.url)];
    connections.push(command, subscriber);
    const store = new RedisPinStore(command, `case${cases++}:`, createLogger('silent'), subscriber);
    await store.start();
    return store;
  }

  for (const [name, run] of SIGHTING_CASES) it(name, async () => run(await redisStore()));
});

describe('MemoryPinStore: odd names through the pins file', () => {
  it('tools named "__proto__" and "constructor" are pinned like any other, through the file too', async () => {
    const file = freshFile();
    const a = new MemoryPinStore(file);
    await a.start();
    await a.observe('u', [sight('__proto__'), sight('constructor'), sight('toString')], false);
    await a.flushed();
    await a.close();
    const b = new MemoryPinStore(file);
    await b.start();
    await expectOddNamesPinned(b);
    assert.equal(Object.getPrototypeOf(Object.prototype), null, 'Object.prototype untouched');
    await b.close();
  });
});

describe('MemoryPinStore: the pins file', () => {
  it('persists sightings (a round trip through a new store) in the documented format', async () => {
    const file = freshFile();
    const a = new MemoryPinStore(file);
    await a.start();
    // One list: the upstream's baseline.
    await a.observe('u', [{ tool: 'one', hash: H1, summary: 'one v1', fixed: undefined }, { tool: 'two', hash: H1, summary: 'two v1', fixed: undefined }], false);
    await see(a, 'u', 'two', H2, 'two v2', undefined);
    await a.flushed();
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(doc.version, 1);
    assert.equal(doc.upstreams.u.one.approved, H1);
    assert.equal(doc.upstreams.u.two.approved, H1);
    assert.equal(doc.upstreams.u.two.pending.hash, H2);
    assert.equal(doc.upstreams.u.two.pending.summary, 'two v2');
    await a.close();

    const b = new MemoryPinStore(file);
    await b.start();
    assert.deepEqual(plain(await b.table(['u'])), doc.upstreams);
    assert.deepEqual(await see(b, 'u', 'one', H1, 'one v1', undefined), { approved: H1, firstSight: false, newChange: false, pending: undefined, unrecorded: false });
    assert.equal((await see(b, 'u', 'two', H2, 'two v2', undefined)).newChange, false, 'the pending change survived the restart');
    await b.close();
  });

  /** A running gateway's store on `file`, recording every approval it hears of. */
  async function watchingGateway(file: string): Promise<{ gateway: MemoryPinStore; seen: Array<[ApprovedPin[], boolean]> }> {
    const gateway = new MemoryPinStore(file);
    const seen: Array<[ApprovedPin[], boolean]> = [];
    gateway.onApproved = (pins, report) => seen.push([pins, report]);
    await gateway.start();
    return { gateway, seen };
  }

  it('an approval written by another process (the CLI) reaches a running store, which reports it once', async () => {
    const file = freshFile();
    const { gateway, seen } = await watchingGateway(file);
    await see(gateway, 'u', 't', H1, 'v1', undefined);
    await see(gateway, 'u', 't', H2, 'v2', undefined);
    await gateway.flushed();

    const cli = new MemoryPinStore(file);
    const table = await cli.table(['u']);
    assert.equal(table.u!.t!.pending!.hash, H2, 'the CLI reads what the gateway wrote');
    assert.deepEqual(await cli.approve('u', [{ tool: 't', hash: H2 }]), [{ upstream: 'u', tool: 't', hash: H2, previous: H1, summary: 'v2' }]);
    await until('the approval to reach the gateway', () => seen.length > 0);
    assert.deepEqual(seen, [[[{ upstream: 'u', tool: 't', hash: H2, previous: H1, summary: 'v2' }], true]]);
    assert.deepEqual(plain(await gateway.table(['u'])), { u: { t: { approved: H2 } } });
    await gateway.close();
  });

  it('the approval of a new tool by the CLI reaches a running store and is reported', async () => {
    const file = freshFile();
    const { gateway, seen } = await watchingGateway(file);
    await see(gateway, 'u', 't', H1, 'v1', undefined);
    await see(gateway, 'u', 'added', H2, 'added v1', undefined);
    await gateway.flushed();
    await new MemoryPinStore(file).approve('u', [{ tool: 'added', hash: H2 }]);
    await until('the approval to reach the gateway', () => seen.length > 0);
    assert.deepEqual(seen, [[[{ upstream: 'u', tool: 'added', hash: H2, previous: undefined, summary: 'added v1' }], true]]);
    await gateway.close();
  });

  it('a rejection written by another process (the CLI) reaches a running store, which reports it once, and survives its later writes', async () => {
    const file = freshFile();
    const gateway = new MemoryPinStore(file);
    const seen: Array<[RejectedPin[], boolean]> = [];
    gateway.onRejected = (pins, report) => seen.push([pins, report]);
    await gateway.start();
    await see(gateway, 'u', 't', H1, 'v1', undefined);
    await see(gateway, 'u', 't', H2, 'v2', undefined);
    await gateway.flushed();
    assert.deepEqual(await new MemoryPinStore(file).reject('u', [{ tool: 't', hash: H2 }]), [{ upstream: 'u', tool: 't', hash: H2, approved: H1, summary: 'v2' }]);
    await until('the rejection to reach the gateway', () => seen.length > 0);
    assert.deepEqual(seen, [[[{ upstream: 'u', tool: 't', hash: H2, approved: H1, summary: 'v2' }], true]]);
    await see(gateway, 'u', 'other', H3, 'new', undefined);
    await gateway.flushed();
    assert.equal((await readPinFile(file)).u!.t!.pending!.rejected, true, 'kept through the gateway write');
    assert.equal(seen.length, 1, 'reported once');
    await gateway.close();
  });

  it("the gateway's later writes keep the CLI's approvals (read-modify-write under the lock)", async () => {
    const file = freshFile();
    const gateway = new MemoryPinStore(file);
    await gateway.start();
    await see(gateway, 'u', 't', H1, 'v1', undefined);
    await see(gateway, 'u', 't', H2, 'v2', undefined);
    await gateway.flushed();
    // Approve and, before the gateway has polled the file, record a new tool on the gateway.
    await new MemoryPinStore(file).approve('u', [{ tool: 't', hash: H2 }]);
    await see(gateway, 'u', 'new', H3, 'new', undefined);
    await gateway.flushed();
    const onDisk = await readPinFile(file);
    assert.equal(onDisk.u!.t!.approved, H2);
    assert.equal(onDisk.u!.new!.approved, undefined, 'a tool new to a pinned upstream is not approved');
    assert.equal(onDisk.u!.new!.pending!.hash, H3);
    await gateway.close();
  });

  it('a pins file removed while the gateway runs is written again from the pins in memory, never started anew (found by a review)', async () => {
    const file = freshFile();
    const { gateway, seen } = await watchingGateway(file);
    await see(gateway, 'u', 't', H1, 'v1', undefined);
    await gateway.flushed();
    rmSync(file);
    // Long enough for the store's poll of the file (every 250 ms) to see it gone: that too must keep the pins.
    await sleep(800);
    assert.equal((await gateway.table(['u'])).u?.t?.approved, H1, 'kept in memory');
    // The upstream then changes its tool: a change for review, not the first sighting of an upstream without pins.
    assert.equal((await see(gateway, 'u', 't', H2, 'v2', undefined)).newChange, true);
    await gateway.flushed();
    assert.deepEqual(seen, [], 'nothing approved');
    const again = await see(gateway, 'u', 't', H2, 'v2', undefined);
    assert.equal(again.approved, H1, 'still held to its pin');
    assert.equal(again.pending?.hash, H2);
    const onDisk = await readPinFile(file);
    assert.equal(onDisk.u!.t!.approved, H1, 'the approval written again');
    assert.equal(onDisk.u!.t!.pending!.hash, H2);
    await gateway.close();
  });

  it('a file that is not a pins file is reported, and the store refuses to start (never trusts every tool anew)', async () => {
    const file = freshFile();
    await writePinFile(file, {});
    writeFileSync(file, '{"not": "pins"}');
    await assert.rejects(readPinFile(file), /not a version 1 pins file/);
    writeFileSync(file, '{oops');
    await assert.rejects(readPinFile(file), /not valid JSON/);
    const s = new MemoryPinStore(file);
    await assert.rejects(s.start(), (err: Error & { code?: string }) => err.code === 'SWB_CONFIG_INVALID' && /pinning\.file: .*not valid JSON.*repair it/.test(err.message));
    await s.close();
    assert.equal(readFileSync(file, 'utf8'), '{oops', 'the file is left for the operator to repair');
    assert.deepEqual(plain(await readPinFile(join(dir, 'absent.json'))), {});
  });
});

describe('withPinFileLock', () => {
  it('serialises read-modify-write across callers', async () => {
    const file = freshFile();
    await writePinFile(file, { u: {} });
    const bump = (i: number) =>
      withPinFileLock(file, async () => {
        const t = await readPinFile(file);
        await sleep(5);
        t.u![`t${i}`] = { approved: H1 };
        await writePinFile(file, t);
      });
    await Promise.all([0, 1, 2, 3, 4].map(bump));
    assert.equal(Object.keys((await readPinFile(file)).u!).length, 5);
  });

  it('takes over a lock left behind by a dead process', async () => {
    const file = freshFile();
    await writePinFile(file, {});
    writeFileSync(`${file}.lock`, '999999');
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(`${file}.lock`, old, old);
    assert.equal(await withPinFileLock(file, async () => 'ran'), 'ran');
  });
});
