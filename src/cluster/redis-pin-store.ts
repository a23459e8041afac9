import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { storeFailed } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { copyTable, emptyTable, MAX_TOOLS_PER_UPSTREAM, type ApprovedPin, type Observation, type PendingPin, type PinEntry, type PinStore, type PinTable, type RejectedPin, type Sighting } from '../policy/pin-store.js';

// The sighting rules of observeIn (src/policy/pin-store.ts) for one batch, in one atomic step. Whether
// the upstream has pins (approved ones, or some in config) is read once, before the first sighting:
// whichever replica's first listing runs first pins every tool of that list (HSETNX in effect: the others
// read the hashes back), and a name that appears in any later list is a change, recorded as pending.
// The cap counts the fields of both hashes (a tool with a pin and a pending change counts twice).
// A pin the process knew (Sighting.known) that the store no longer holds (it lost its data) is written
// back first, so the upstream still counts as pinned and its next definition is held to that pin.
// KEYS: approved hash, pending hash. ARGV: "1" if pinned in config, cap, then per sighting: tool, hash,
// pending JSON, fixed hash or "", known hash or "". Returns per sighting: approved or "", pending JSON or
// "", first sight, new change, unrecorded.
const OBSERVE = `
for i = 3, #ARGV, 5 do
  if ARGV[i + 4] ~= '' then redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 4]) end
end
local baseline = ARGV[1] ~= '1' and redis.call('HLEN', KEYS[1]) == 0
local cap = tonumber(ARGV[2])
local count = redis.call('HLEN', KEYS[1]) + redis.call('HLEN', KEYS[2])
local out = {}
for i = 3, #ARGV, 5 do
  local tool, hash, pendingJson = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local approved = ARGV[i + 3]
  if approved == '' then approved = redis.call('HGET', KEYS[1], tool) or '' end
  local pending = redis.call('HGET', KEYS[2], tool)
  local full = count >= cap and not pending and redis.call('HEXISTS', KEYS[1], tool) == 0
  if approved == hash then
    if pending then count = count - redis.call('HDEL', KEYS[2], tool) end
    table.insert(out, approved); table.insert(out, ''); table.insert(out, 0); table.insert(out, 0); table.insert(out, 0)
  elseif full then
    table.insert(out, approved); table.insert(out, ''); table.insert(out, 0); table.insert(out, 0); table.insert(out, 1)
  elseif approved == '' and baseline then
    count = count + redis.call('HSET', KEYS[1], tool, hash)
    if pending then count = count - redis.call('HDEL', KEYS[2], tool) end
    table.insert(out, hash); table.insert(out, ''); table.insert(out, 1); table.insert(out, 0); table.insert(out, 0)
  elseif pending and cjson.decode(pending).hash == hash then
    table.insert(out, approved); table.insert(out, pending); table.insert(out, 0); table.insert(out, 0); table.insert(out, 0)
  else
    count = count + redis.call('HSET', KEYS[2], tool, pendingJson)
    table.insert(out, approved); table.insert(out, pendingJson); table.insert(out, 0); table.insert(out, 1); table.insert(out, 0)
  end
end
return out`;

// Approves each (tool, hash) whose pending hash is still that hash. Returns (tool, pending JSON,
// previously approved hash or "") triples.
const APPROVE = `
local out = {}
for i = 1, #ARGV, 2 do
  local p = redis.call('HGET', KEYS[2], ARGV[i])
  if p and cjson.decode(p).hash == ARGV[i + 1] then
    local was = redis.call('HGET', KEYS[1], ARGV[i]) or ''
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    redis.call('HDEL', KEYS[2], ARGV[i])
    out[#out + 1] = ARGV[i]
    out[#out + 1] = p
    out[#out + 1] = was
  end
end
return out`;

// Marks each (tool, hash) whose pending hash is still that hash, and not rejected yet, as rejected.
// Returns (tool, pending JSON as now stored, approved hash or "") triples.
const REJECT = `
local out = {}
for i = 1, #ARGV, 2 do
  local p = redis.call('HGET', KEYS[2], ARGV[i])
  if p then
    local d = cjson.decode(p)
    if d.hash == ARGV[i + 1] and d.rejected ~= true then
      d.rejected = true
      local s = cjson.encode(d)
      redis.call('HSET', KEYS[2], ARGV[i], s)
      out[#out + 1] = ARGV[i]
      out[#out + 1] = s
      out[#out + 1] = redis.call('HGET', KEYS[1], ARGV[i]) or ''
    end
  end
end
return out`;

/** On the approvals channel. `rejected` is absent in approvals (and from replicas that predate rejection). */
interface ApprovalMessage {
  id: string;
  pins: ApprovedPin[];
  rejected?: RejectedPin[];
}

/**
 * Pins shared by every replica: per upstream a hash of approved hashes and one of pending changes,
 * under the key prefix. Approvals (from the CLI) are announced on a channel; every replica drops its
 * cached verdicts, and the one that wins a SET NX on the announcement writes the audit line.
 */
export class RedisPinStore implements PinStore {
  readonly #redis: Redis;
  readonly #sub: Redis | undefined;
  readonly #prefix: string;
  readonly #logger: Logger;
  onApproved: ((pins: ApprovedPin[], report: boolean) => void) | undefined;
  onRejected: ((pins: RejectedPin[], report: boolean) => void) | undefined;

  /** `subscriber`: a connection of its own for the approvals channel (a running gateway; the CLI has none). */
  constructor(redis: Redis, prefix: string, logger: Logger, subscriber?: Redis) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#logger = logger;
    this.#sub = subscriber;
  }

  #keys(upstream: string): [string, string] {
    return [`${this.#prefix}pins:${upstream}`, `${this.#prefix}pins:${upstream}:pending`];
  }

  get #channel(): string {
    return `${this.#prefix}pins:approved`;
  }

  async start(): Promise<void> {
    if (!this.#sub) return;
    this.#sub.on('message', (channel: string, text: string) => {
      if (channel === this.#channel) void this.#onMessage(text);
    });
    await this.#sub.subscribe(this.#channel);
  }

  async #onMessage(text: string): Promise<void> {
    let msg: ApprovalMessage;
    try {
      msg = JSON.parse(text) as ApprovalMessage;
      if (typeof msg.id !== 'string' || !Array.isArray(msg.pins)) throw new Error('not an approval message');
    } catch (err) {
      this.#logger.warn({ err: (err as Error).message }, 'ignored a malformed message on the pin approvals channel');
      return;
    }
    // One replica reports; when Redis cannot say which, reporting twice beats not at all.
    const report = await this.#redis.set(`${this.#prefix}pins:reported:${msg.id}`, '1', 'PX', 3_600_000, 'NX').then(
      (r) => r === 'OK',
      () => true,
    );
    if (msg.pins.length > 0) this.onApproved?.(msg.pins, report);
    if (Array.isArray(msg.rejected) && msg.rejected.length > 0) this.onRejected?.(msg.rejected, report);
  }

  async observe(upstream: string, sightings: readonly Sighting[], pinnedInConfig: boolean): Promise<Observation[]> {
    const firstSeen = new Date().toISOString();
    const out: Observation[] = [];
    // A baseline beyond the cap cannot be recorded anyway, so chunks of that size keep a first listing
    // in one script while no script holds Redis for long (a server may list 100k invented names).
    for (let i = 0; i < sightings.length; i += MAX_TOOLS_PER_UPSTREAM) {
      const args = [pinnedInConfig ? '1' : '0', String(MAX_TOOLS_PER_UPSTREAM)];
      for (const s of sightings.slice(i, i + MAX_TOOLS_PER_UPSTREAM)) {
        // No findings: no member (cjson would write an empty array back as {}).
        const pending: PendingPin = { hash: s.hash, summary: s.summary, firstSeen, ...(s.findings?.length ? { findings: s.findings } : {}) };
        args.push(s.tool, s.hash, JSON.stringify(pending), s.fixed ?? '', s.known ?? '');
      }
      const r = (await this.#redis.eval(OBSERVE, 2, ...this.#keys(upstream), ...args).catch(storeFailed)) as Array<string | number>;
      for (let j = 0; j < r.length; j += 5) {
        const pending = r[j + 1] as string;
        out.push({ approved: (r[j] as string) || undefined, pending: pending ? (JSON.parse(pending) as PendingPin) : undefined, firstSight: r[j + 2] === 1, newChange: r[j + 3] === 1, unrecorded: r[j + 4] === 1 });
      }
    }
    return out;
  }

  async approve(upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): Promise<ApprovedPin[]> {
    if (items.length === 0) return [];
    const flat = items.flatMap((i) => [i.tool, i.hash]);
    const out = (await this.#redis.eval(APPROVE, 2, ...this.#keys(upstream), ...flat).catch(storeFailed)) as string[];
    const pins: ApprovedPin[] = [];
    for (let i = 0; i < out.length; i += 3) {
      const p = JSON.parse(out[i + 1]!) as PendingPin;
      pins.push({ upstream, tool: out[i]!, hash: p.hash, previous: out[i + 2] || undefined, summary: p.summary });
    }
    if (pins.length > 0) await this.#redis.publish(this.#channel, JSON.stringify({ id: randomUUID(), pins } satisfies ApprovalMessage));
    return pins;
  }

  async reject(upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): Promise<RejectedPin[]> {
    if (items.length === 0) return [];
    const flat = items.flatMap((i) => [i.tool, i.hash]);
    const out = (await this.#redis.eval(REJECT, 2, ...this.#keys(upstream), ...flat).catch(storeFailed)) as string[];
    const rejected: RejectedPin[] = [];
    for (let i = 0; i < out.length; i += 3) {
      const p = JSON.parse(out[i + 1]!) as PendingPin;
      rejected.push({ upstream, tool: out[i]!, hash: p.hash, approved: out[i + 2] || undefined, summary: p.summary });
    }
    // Announced like approvals, so that one replica audits it wherever it was made (the CLI has no audit log).
    if (rejected.length > 0) await this.#redis.publish(this.#channel, JSON.stringify({ id: randomUUID(), pins: [], rejected } satisfies ApprovalMessage));
    return rejected;
  }

  async restore(upstream: string, pins: ReadonlyArray<{ tool: string; hash: string }>): Promise<void> {
    if (pins.length === 0) return;
    const batch = this.#redis.pipeline();
    for (const p of pins) batch.hsetnx(this.#keys(upstream)[0], p.tool, p.hash);
    const results = (await batch.exec().catch(storeFailed)) ?? [];
    const failed = results.find(([err]) => err);
    if (failed) storeFailed(failed[0]);
  }

  async table(upstreams: readonly string[]): Promise<PinTable> {
    const out: PinTable = emptyTable();
    for (const u of upstreams) {
      const [approvedKey, pendingKey] = this.#keys(u);
      const [approved, pending] = await Promise.all([this.#redis.hgetall(approvedKey), this.#redis.hgetall(pendingKey)]).catch(storeFailed);
      const tools = emptyTable<PinEntry>();
      for (const [tool, hash] of Object.entries(approved)) tools[tool] = { approved: hash };
      for (const [tool, json] of Object.entries(pending)) (tools[tool] ??= {}).pending = JSON.parse(json) as PendingPin;
      if (Object.keys(tools).length > 0) out[u] = tools;
    }
    return copyTable(out);
  }

  async close(): Promise<void> {
    this.#sub?.disconnect();
  }
}
