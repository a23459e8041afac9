import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { ApprovedPin, Observation, PendingPin, PinStore, PinTable } from '../policy/pin-store.js';

// The sighting rules of observeIn (src/policy/pin-store.ts) in one atomic step. First sight is an
// HSETNX in effect: whichever replica sees a tool first records its hash, the others read it back.
// KEYS: approved hash, pending hash. ARGV: tool, hash, pending JSON, fixed hash or "".
const OBSERVE = `
local approved = ARGV[4]
if approved == '' then approved = redis.call('HGET', KEYS[1], ARGV[1]) end
if not approved then
  redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return {ARGV[2], '', 1, 0}
end
local pending = redis.call('HGET', KEYS[2], ARGV[1])
if approved == ARGV[2] then
  if pending then redis.call('HDEL', KEYS[2], ARGV[1]) end
  return {approved, '', 0, 0}
end
if pending and cjson.decode(pending).hash == ARGV[2] then return {approved, pending, 0, 0} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return {approved, ARGV[3], 0, 1}`;

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

interface ApprovalMessage {
  id: string;
  pins: ApprovedPin[];
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
    this.onApproved?.(msg.pins, report);
  }

  async observe(upstream: string, tool: string, hash: string, summary: string, fixed: string | undefined): Promise<Observation> {
    const pendingJson = JSON.stringify({ hash, summary, firstSeen: new Date().toISOString() } satisfies PendingPin);
    const [approved, pending, first, change] = (await this.#redis.eval(OBSERVE, 2, ...this.#keys(upstream), tool, hash, pendingJson, fixed ?? '')) as [string, string, number, number];
    return { approved, firstSight: first === 1, newChange: change === 1, pending: pending ? (JSON.parse(pending) as PendingPin) : undefined };
  }

  async approve(upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): Promise<ApprovedPin[]> {
    if (items.length === 0) return [];
    const flat = items.flatMap((i) => [i.tool, i.hash]);
    const out = (await this.#redis.eval(APPROVE, 2, ...this.#keys(upstream), ...flat)) as string[];
    const pins: ApprovedPin[] = [];
    for (let i = 0; i < out.length; i += 3) {
      const p = JSON.parse(out[i + 1]!) as PendingPin;
      pins.push({ upstream, tool: out[i]!, hash: p.hash, previous: out[i + 2] || undefined, summary: p.summary });
    }
    if (pins.length > 0) await this.#redis.publish(this.#channel, JSON.stringify({ id: randomUUID(), pins } satisfies ApprovalMessage));
    return pins;
  }

  async table(upstreams: readonly string[]): Promise<PinTable> {
    const out: PinTable = {};
    for (const u of upstreams) {
      const [approvedKey, pendingKey] = this.#keys(u);
      const [approved, pending] = await Promise.all([this.#redis.hgetall(approvedKey), this.#redis.hgetall(pendingKey)]);
      const tools: PinTable[string] = {};
      for (const [tool, hash] of Object.entries(approved)) tools[tool] = { approved: hash };
      for (const [tool, json] of Object.entries(pending)) (tools[tool] ??= {}).pending = JSON.parse(json) as PendingPin;
      if (Object.keys(tools).length > 0) out[u] = tools;
    }
    return out;
  }

  async close(): Promise<void> {
    this.#sub?.disconnect();
  }
}
