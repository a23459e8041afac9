import { connectRedis } from './cluster/redis-connection.js';
import { RedisPinStore } from './cluster/redis-pin-store.js';
import { loadConfig } from './config/load.js';
import { redactUrl } from './config/redact.js';
import type { Config } from './config/schema.js';
import { createLogger } from './observability/logger.js';
import { terminalJson, terminalText as shown } from './observability/terminal-text.js';
import { MemoryPinStore, type PendingPin, type PinStore, type PinTable } from './policy/index.js';
import { emptyTable } from './policy/pin-store.js';

export interface PinsCommandInput {
  /** "list", "approve" or "reject". */
  action: string | undefined;
  /** approve, reject: UPSTREAM [TOOL]... */
  args: string[];
  /** The config file: --config, SWITCHBOARD_CONFIG or the quick start, as for `token` (cli.ts decides). */
  config: string;
  all: boolean;
  json: boolean;
  /** approve, reject: the pending hashes the operator reviewed (`--hash`, as the admin API's "hash"). */
  hashes: string[];
}

interface Output {
  write(s: string): unknown;
}

const NO_STORE =
  'approvals need a place a running gateway reads pins from: set pinning.file in the config (one replica), or configure Redis (store.redis or REDIS_URL); without either, pins live only in the gateway\'s memory';

interface OpenStore {
  store: PinStore;
  where: string;
  close(): Promise<void>;
}

function openStore(config: Config): OpenStore | undefined {
  const logger = createLogger('silent');
  const redis = config.store.redis;
  if (redis) {
    // A one-shot client: queue commands until connected, give up after a few attempts.
    const conn = connectRedis(redis.url, logger, undefined, { enableOfflineQueue: true, retryStrategy: (n) => (n > 3 ? null : 200) });
    // As GET /config shows it: ioredis also takes the password from the query (?password=) and a user name
    // may be a token, so both go, not only the password.
    return { store: new RedisPinStore(conn, redis.keyPrefix, logger), where: `Redis ${redactUrl(redis.url)} (prefix "${redis.keyPrefix}")`, close: async () => conn.disconnect() };
  }
  if (config.pinning.file) {
    const store = new MemoryPinStore(config.pinning.file, logger);
    return { store, where: config.pinning.file, close: () => store.close() };
  }
  return undefined;
}

type View = Record<string, Record<string, { approved?: string; source: 'config' | 'store'; pending?: PendingPin }>>;

/** The config's pins for an upstream, own keys only: a tool named "constructor" is not Object's constructor. */
function configPins(config: Config, upstream: string): Map<string, string> {
  return new Map(Object.entries(Object.hasOwn(config.pinning.pins, upstream) ? config.pinning.pins[upstream]! : {}));
}

/** Config pins on top of the store's table: the config is authoritative for the tools it names. */
function merged(config: Config, table: PinTable): View {
  const out: View = emptyTable();
  for (const u of config.upstreams.map((x) => x.name)) {
    // Null-prototype tables: tool names come from upstreams ("__proto__" must be a key like any other).
    const tools: View[string] = emptyTable();
    for (const [tool, e] of Object.entries(table[u] ?? {})) tools[tool] = { ...(e.approved !== undefined ? { approved: e.approved } : {}), source: 'store', ...(e.pending ? { pending: e.pending } : {}) };
    for (const [tool, hash] of configPins(config, u)) tools[tool] = { ...tools[tool], approved: hash, source: 'config' };
    if (Object.keys(tools).length > 0) {
      const sorted: View[string] = emptyTable();
      for (const tool of Object.keys(tools).sort((a, b) => a.localeCompare(b))) sorted[tool] = tools[tool]!;
      out[u] = sorted;
    }
  }
  return out;
}

/** Where a pending definition holds hidden text (kind, count, field; never the text): what to look for before approving it. */
function hiddenTextLine(pending: PendingPin): string {
  return `  hidden text\t${(pending.findings ?? []).map((f) => `${shown(f.kind)} ×${f.count} in ${shown(f.path)}`).join('; ')}\n`;
}

async function list(config: Config, opened: OpenStore | undefined, input: PinsCommandInput, out: Output, err: Output): Promise<number> {
  if (!opened) err.write(`switchboard pins: only the config's pins are listed: ${NO_STORE}\n`);
  const table = opened ? await opened.store.table(config.upstreams.map((u) => u.name)) : {};
  const view = merged(config, table);
  if (input.json) {
    out.write(`${terminalJson(JSON.stringify(view, null, 2))}\n`);
    return 0;
  }
  let pending = 0;
  for (const [upstream, tools] of Object.entries(view)) {
    for (const [tool, e] of Object.entries(tools)) {
      // No approved hash: a tool that appeared after the upstream was pinned. Names and summaries come
      // from upstreams: printed escaped (terminal-text.ts).
      out.write(`${upstream}\t${shown(tool)}\t${e.approved === undefined ? 'none (new tool)' : shown(e.approved)}\t${e.source}\n`);
      if (e.pending) {
        if (!e.pending.rejected) pending++;
        out.write(`  ${e.pending.rejected ? 'rejected' : 'pending'}\t${shown(e.pending.hash)}\t${e.approved === undefined ? 'new tool, ' : ''}first seen ${shown(e.pending.firstSeen)}\t${terminalJson(JSON.stringify(e.pending.summary))}\n`);
        // Hidden text in the pending definition: what to look for before approving it.
        if (e.pending.findings) out.write(hiddenTextLine(e.pending));
      }
    }
  }
  if (Object.keys(view).length === 0) out.write(`no tool pins yet${opened ? ` in ${opened.where}` : ''}\n`);
  if (pending > 0) out.write(`${pending} change(s) pending: review them, then run "switchboard pins approve --config FILE UPSTREAM [TOOL]... --hash HASH..." with the hashes you reviewed (or "pins reject" with them)\n`);
  return 0;
}

type Decision = 'approve' | 'reject';
type Item = { tool: string; hash: string };

/** The named upstream, or every one; undefined (after saying why) when the arguments do not fit. */
function upstreamsOf(config: Config, opened: OpenStore | undefined, input: PinsCommandInput, err: Output): string[] | undefined {
  const [upstream] = input.args;
  const cmd = `switchboard pins ${input.action}`;
  if (!input.all && !upstream) return void err.write(`${cmd}: name an UPSTREAM (and optionally TOOLs), or pass --all\n`);
  if (input.all && upstream) return void err.write(`${cmd}: --all means every upstream; do not name one as well\n`);
  const names = config.upstreams.map((u) => u.name);
  if (upstream && !names.includes(upstream)) return void err.write(`${cmd}: the config has no upstream "${upstream}" (it has ${names.join(', ')})\n`);
  if (!opened) return void err.write(`${cmd}: ${NO_STORE}\n`);
  return upstream ? [upstream] : names;
}

/**
 * The pending hashes to approve or reject, as read now: the store acts only while each is still the
 * pending hash. Without named tools, every change still awaiting a decision (rejected ones are not).
 * A config pin's change cannot be approved here (the config decides), but it can be rejected. Given
 * `hashes` (what the operator reviewed), a pending definition with another hash is left alone.
 */
function reviewed(config: Config, table: PinTable, u: string, named: string[], how: Decision, hashes: ReadonlySet<string> | undefined, err: Output): { items: Item[]; failed: boolean } {
  const entries = table[u] ?? emptyTable();
  const fixedPins = configPins(config, u);
  const tools = named.length > 0 ? named : Object.keys(entries).filter((t) => entries[t]!.pending && !entries[t]!.pending!.rejected).sort();
  const items: Item[] = [];
  let failed = false;
  for (const tool of tools) {
    const pending = entries[tool]?.pending;
    const fixed = fixedPins.get(tool);
    if (how === 'approve' && fixed !== undefined) {
      err.write(`${u} ${shown(tool)}: pinned in the config (pinning.pins.${u}.${shown(tool)}); the config decides: to accept ${pending ? `the change, put ${shown(pending.hash)} there` : 'a change, update that pin'}\n`);
      if (named.length > 0) failed = true;
    } else if (!pending) {
      err.write(`${u} ${shown(tool)}: no change is pending\n`);
      failed = true;
    } else if (how === 'reject' && pending.rejected) {
      err.write(`${u} ${shown(tool)}: its pending change ${shown(pending.hash)} is rejected already\n`);
      failed = true;
    } else if (hashes && !hashes.has(pending.hash)) {
      err.write(`${u} ${shown(tool)}: its pending definition ${shown(pending.hash)} is not one you reviewed (no --hash names it): it appeared or changed since; review it with "switchboard pins list", nothing ${how === 'approve' ? 'approved' : 'rejected'} for it\n`);
      failed = true;
    } else {
      items.push({ tool, hash: pending.hash });
    }
  }
  return { items, failed };
}

/**
 * `pins approve` or `pins reject` without --hash decides nothing: it shows what is pending now and the
 * command that decides exactly that, so what gets decided is always a definition the operator saw.
 */
function showUnreviewed(table: PinTable, input: PinsCommandInput, found: Array<{ u: string; items: Item[] }>, out: Output, err: Output): number {
  for (const { u, items } of found) {
    for (const { tool, hash } of items) {
      const e = table[u]![tool]!;
      out.write(`pending ${u} ${shown(tool)} ${shown(hash)}${e.approved === undefined ? ' (new tool)' : ''} ${terminalJson(JSON.stringify(e.pending!.summary))}\n`);
      if (e.pending!.findings) out.write(hiddenTextLine(e.pending!));
    }
  }
  const target = input.all ? '--all' : input.args.map(shown).join(' ');
  const hashes = found.flatMap(({ items }) => items.map((i) => `--hash ${shown(i.hash)}`)).join(' ');
  const how = input.action as Decision;
  const done = how === 'approve' ? 'approved' : 'rejected';
  err.write(`switchboard pins ${how}: nothing ${done}: ${how === 'approve' ? 'an approval' : 'a rejection'} names each definition you reviewed by its hash, so that a definition that changed since is not ${done} unseen; to ${how} what is shown above, run: switchboard pins ${how} --config FILE ${target} ${hashes}\n`);
  return 2;
}

/** Each `--hash` no item matched: the definition changed since it was reviewed (or was decided already). */
function unmatched(hashes: ReadonlySet<string>, found: Array<{ items: Item[] }>, err: Output): boolean {
  const used = new Set(found.flatMap(({ items }) => items.map((i) => i.hash)));
  const left = [...hashes].filter((h) => !used.has(h));
  for (const h of left) err.write(`--hash ${h}: no pending change has this hash: it changed since it was reviewed, or was decided already (a rejected change is approved by naming its TOOL)\n`);
  return left.length > 0;
}

async function decide(config: Config, opened: OpenStore | undefined, input: PinsCommandInput, out: Output, err: Output): Promise<number> {
  const how = input.action as Decision;
  const upstreams = upstreamsOf(config, opened, input, err);
  if (!upstreams || !opened) return 2;
  const table = await opened.store.table(config.upstreams.map((u) => u.name));
  const hashes = input.hashes.length > 0 ? new Set(input.hashes) : undefined;
  let code = 0;
  const found: Array<{ u: string; items: Item[] }> = [];
  for (const u of upstreams) {
    const { items, failed } = reviewed(config, table, u, input.args.slice(1), how, hashes, err);
    if (failed) code = 1;
    found.push({ u, items });
  }
  if (hashes && unmatched(hashes, found, err)) code = 1;
  if (!hashes && found.some((f) => f.items.length > 0)) return showUnreviewed(table, input, found, out, err);
  let count = 0;
  for (const { u, items } of found) {
    const done: Array<{ tool: string; line: string }> =
      how === 'approve'
        ? (await opened.store.approve(u, items)).map((p) => ({ tool: p.tool, line: `approved ${u} ${shown(p.tool)} ${shown(p.hash)}${p.previous === undefined ? ' (new tool)' : ''} ${terminalJson(JSON.stringify(p.summary))}` }))
        : (await opened.store.reject(u, items)).map((p) => ({ tool: p.tool, line: `rejected ${u} ${shown(p.tool)} ${shown(p.hash)}${p.approved === undefined ? ' (new tool: stays withheld)' : ` (stays held to ${shown(p.approved)})`} ${terminalJson(JSON.stringify(p.summary))}` }));
    for (const d of done) out.write(`${d.line}\n`);
    count += done.length;
    for (const i of items) {
      if (done.some((d) => d.tool === i.tool)) continue;
      err.write(`${u} ${shown(i.tool)}: its pending definition changed while deciding; run "switchboard pins list" and ${how} again\n`);
      code = 1;
    }
  }
  if (count === 0 && code === 0) out.write('no changes pending\n');
  else if (count > 0) out.write(`written to ${opened.where}; ${how === 'approve' ? 'running gateways pick it up and tell their clients to re-list' : 'the tools stay withheld; running gateways audit the rejection'}\n`);
  return code;
}

/** Why the --hash values do not fit (a pending hash as `pins list` prints it; approve and reject only), or undefined. */
function hashUsage(input: PinsCommandInput): string | undefined {
  if (input.hashes.length === 0) return undefined;
  if (input.action === 'list') return '--hash is an option of "pins approve" and "pins reject"';
  const bad = input.hashes.find((h) => !/^[0-9a-f]{64}$/.test(h));
  return bad === undefined ? undefined : `--hash takes a pending definition's sha256 as "pins list" prints it (64 hex digits), not ${shown(bad)}`;
}

/** `switchboard pins list|approve|reject`: inspect tool pins and approve or reject changed definitions. */
export async function pinsCommand(input: PinsCommandInput, usage: string, out: Output = process.stdout, err: Output = process.stderr): Promise<number> {
  if (input.action !== 'list' && input.action !== 'approve' && input.action !== 'reject') {
    err.write(`switchboard pins: expected "list", "approve" or "reject"\n${usage}`);
    return 2;
  }
  const usageError = hashUsage(input);
  if (usageError) {
    err.write(`switchboard pins ${input.action}: ${usageError}\n${usage}`);
    return 2;
  }
  const config = loadConfig(input.config);
  const opened = openStore(config);
  try {
    return input.action === 'list' ? await list(config, opened, input, out, err) : await decide(config, opened, input, out, err);
  } catch (e) {
    err.write(`switchboard pins: ${(e as Error).message}\n`);
    return 1;
  } finally {
    await opened?.close();
  }
}
