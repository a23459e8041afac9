/**
 * What the user is shown when a confirmation rule asks: the tool, its upstream and the arguments the
 * call will be sent with, bounded in size and with secret-looking values masked. The user needs to see
 * what is about to happen; the client, its logs and whoever looks over the user's shoulder need not see
 * the credentials a tool call may carry.
 */

export const MASK = '[masked]';

/** Limits on the arguments as shown (the call itself is forwarded whole and unchanged). */
const MAX_STRING = 200;
/** A longer string: its first and last characters (what follows padding is what an injection hides). */
const HEAD = 120;
const TAIL = 80;
/** A run of one character this long, in a long string, is shown by its count: padding takes no room. */
const RUN = /(.)\1{15,}/gsu;
const MAX_ENTRIES = 20;
const MAX_DEPTH = 5;
const MAX_ARGUMENTS_CHARS = 2000;
/** A string's head and its tail are each looked at for secrets up to here (before they are cut). */
const SCAN_CHARS = 4096;
const MAX_NAME = 128;

/** Key names that say their value is a credential (lower case, without "-", "_" and spaces). */
const SECRET_WORDS = ['password', 'passwd', 'passphrase', 'secret', 'token', 'authorization', 'credential', 'cookie', 'apikey', 'privatekey', 'accesskey', 'signature'];
const SECRET_NAMES = new Set(['pwd', 'pass', 'auth', 'sessionid']);

/**
 * Names ending in "key" that say what a call acts on, not a credential: an S3 object's key, a Redis or
 * cache key, a table's primary or sort key. Masked by name, a confirmation of "delete this object" showed
 * `"key": "[masked]"`, and the user could not see what they were approving. A credential-looking value
 * under one of them is still masked by its look (SECRET_VALUES, OPAQUE).
 */
const TARGET_KEYS = new Set(['key', 'keys', 'objectkey', 'objectkeys', 'cachekey', 'primarykey', 'partitionkey', 'sortkey', 'rangekey', 'hashkey', 'rowkey', 'itemkey', 'recordkey', 'entrykey', 'filekey', 'sourcekey', 'targetkey', 'destkey', 'destinationkey', 'foreignkey', 'lookupkey']);

export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_ .]/g, '');
  if (TARGET_KEYS.has(k)) return false;
  return SECRET_NAMES.has(k) || k.endsWith('key') || k.endsWith('keys') || SECRET_WORDS.some((w) => k.includes(w));
}

/** Values that look like credentials wherever they appear, each replaced by MASK. */
const SECRET_VALUES: readonly RegExp[] = [
  /\bbearer\s+[A-Za-z0-9._~+/=-]{8,}/gi, // an Authorization header's value
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, // a JWT (its header is base64url of '{"')
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16})/g, // well-known token prefixes
];
/**
 * Long hex (keys, secrets), but not a digest that names its algorithm (`sha256:…`, an image's): a content
 * address, never a secret. See also REVISION_KEYS.
 */
const HEX = /(?<!\bsha(?:1|224|256|384|512):)\b[0-9a-fA-F]{32,}\b/g;
/**
 * Names whose hex value is a commit, a digest or a revision: what a reset, a merge or a deploy acts on. Masked
 * as a long hex, "reset main to [masked]" hid the target; any other credential look is still masked.
 */
const REVISION_KEYS = new Set(['sha', 'commit', 'commitsha', 'commitid', 'commithash', 'ref', 'revision', 'rev', 'digest', 'hash', 'head', 'headsha', 'base', 'basesha', 'parent', 'parentsha', 'oid', 'treesha', 'blobsha', 'expectedsha', 'checksum']);
/** A long run of base64 / base64url characters: masked when it mixes digits, upper and lower case (a key, not a word or a path). */
const OPAQUE = /[A-Za-z0-9+/_-]{32,}={0,2}/g;

function looksRandom(s: string): boolean {
  // A path is mostly words between slashes; a key has few or none.
  const slashes = s.split('/').length - 1;
  return /[0-9]/.test(s) && /[A-Z]/.test(s) && /[a-z]/.test(s) && slashes <= 2;
}

/** `text` with credential-looking values masked; `revision`: its key names a commit or digest (REVISION_KEYS), whose hex is shown. */
export function maskSecrets(text: string, revision = false): string {
  let out = text;
  for (const re of SECRET_VALUES) out = out.replace(re, (m) => (/^bearer/i.test(m) ? `${m.slice(0, 6)} ${MASK}` : MASK));
  if (!revision) out = out.replace(HEX, MASK);
  return out.replace(OPAQUE, (m) => (looksRandom(m) ? MASK : m));
}

function isRevisionKey(key: string): boolean {
  return REVISION_KEYS.has(key.toLowerCase().replace(/[-_ .]/g, ''));
}

/**
 * What JSON.stringify leaves as it is but a reader does not see as it is: DEL and C1 controls (a terminal
 * client's escape sequences), format and other default-ignorable characters (bidi overrides and isolates
 * that reorder what follows them, zero-width and tag characters, fillers that render as nothing), and
 * line and paragraph separators (a line break of their own). A call's arguments are the model's, so an
 * injected instruction may write them to be read otherwise than they are sent (Trojan Source: text moved
 * into or out of a comment, a line that seems to end the JSON). Written as \uXXXX escapes, the JSON
 * still says exactly what is sent.
 */
const UNSEEN = /[\u007f-\u009f\u2028\u2029\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

const escaped = (c: string): string => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

/** JSON text with every character in UNSEEN escaped: the same JSON, every character of it visible. */
function visible(json: string): string {
  return json.replace(UNSEEN, escaped);
}

function cut(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}… (${s.length - max} more characters)` : s;
}

/** A run of one character as its code point and count: `[U+0020 ×400]`. */
function counted(run: string, c: string): string {
  return `[U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} ×${run.length / c.length}]`;
}

/**
 * A string fit to be shown: secrets masked; longer than MAX_STRING, runs of one character written by
 * count, then, if still long, its first HEAD and last TAIL characters with how much of the middle is
 * left out. Cut at its first 200 characters before 2026-12-06, "ls" + 400 spaces + "; curl … | sh" showed
 * the user "ls" and spaces: an injected argument's end, past padding, was never shown.
 */
function shownString(value: string, revision: boolean): string {
  const short = value.length <= MAX_STRING ? maskSecrets(value, revision) : undefined;
  if (short !== undefined && short.length <= MAX_STRING) return short;
  const text = value.replace(RUN, counted);
  const head = maskSecrets(text.slice(0, SCAN_CHARS), revision);
  if (text.length <= SCAN_CHARS && head.length <= MAX_STRING) return head;
  const tail = text.length <= SCAN_CHARS ? head : maskSecrets(text.slice(-SCAN_CHARS), revision);
  const left = text.length - HEAD - TAIL;
  return `${head.slice(0, HEAD)}… (${value.length} characters in all, ${left} in the middle not shown) …${tail.slice(-TAIL)}`;
}

/** A copy of `value` fit to be shown: secrets masked, long strings cut, wide or deep structures elided. */
export function shownValue(value: unknown, depth = 0, revision = false): unknown {
  if (typeof value === 'string') return shownString(value, revision);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? '[…]' : '{…}';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ENTRIES).map((v) => shownValue(v, depth + 1));
    if (value.length > MAX_ENTRIES) items.push(`… ${value.length - MAX_ENTRIES} more items`);
    return items;
  }
  // Built with defineProperty semantics (entries, not assignment): a "__proto__" key stays a key.
  return Object.fromEntries(shownEntries(Object.entries(value), depth));
}

/** An object's members fit to be shown, at most MAX_ENTRIES of them in the order given (and how many more there are). */
function shownEntries(entries: ReadonlyArray<[string, unknown]>, depth: number): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = entries.slice(0, MAX_ENTRIES).map(([k, v]) => [cut(k, MAX_STRING), isSecretKey(k) && v !== null && v !== undefined ? MASK : shownValue(v, depth + 1, isRevisionKey(k))]);
  if (entries.length > MAX_ENTRIES) out.push(['…', `${entries.length - MAX_ENTRIES} more keys`]);
  return out;
}

/**
 * The arguments object's members as indented JSON lines, the tool's declared parameters first (in its
 * schema's order), then the keys it does not declare. Written member by member: an object would list
 * integer-like keys ("0", "1", …) before every other whatever the order, and keys a call adds (an injected
 * instruction can have a model add 25 long ones) would push the arguments that matter past the bounds unseen.
 */
function objectMembers(args: object, declared: readonly string[]): string[] {
  const rank = new Map(declared.map((k, i) => [k, i]));
  const entries = Object.entries(args)
    .map((e, i) => ({ e, r: rank.get(e[0]) ?? declared.length + i }))
    .sort((a, b) => a.r - b.r)
    .map(({ e }) => e);
  return shownEntries(entries, 0).map(([k, v]) => visible(`  ${JSON.stringify(k)}: ${(JSON.stringify(v, null, 2) ?? 'null').replace(/\n/g, '\n  ')}`));
}

const objectText = (members: readonly string[]): string => (members.length === 0 ? '{}' : `{\n${members.join(',\n')}\n}`);

/** The room `… (N not shown) …` takes. */
const NOTE = 24;

/** Where a cut at `at` falls without splitting a surrogate pair (half an emoji shown as "�"). */
function cutAt(text: string, at: number): number {
  const c = text.charCodeAt(at);
  return c >= 0xdc00 && c <= 0xdfff ? at - 1 : at;
}

/**
 * `text` in at most about `max` characters: its start and its end around how much of the middle is left
 * out, as a long string is shown (what an injected argument puts last is what matters).
 */
function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = Math.max(max - NOTE, 16); // the note's room kept: the whole stays within its bound
  const head = cutAt(text, Math.ceil(room * 0.6));
  const tail = cutAt(text, text.length - (room - Math.ceil(room * 0.6)));
  return `${text.slice(0, head)}… (${tail - head} not shown) …${text.slice(tail)}`;
}

/**
 * The arguments as the user reads them: indented JSON of shownValue() (declared parameters first), about
 * MAX_ARGUMENTS_CHARS at most. Longer, each argument gets its share and shows its start and its end:
 * before 2026-12-06 the whole was cut after its first MAX_ARGUMENTS_CHARS, so a list of long commands, or
 * long arguments before the one that matters, hid the end of the call from the person asked.
 */
export function shownArguments(args: unknown, declared: readonly string[] = []): string {
  if (args === undefined) return '(none)';
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return bounded(visible(JSON.stringify(shownValue(args), null, 2) ?? String(args)), MAX_ARGUMENTS_CHARS);
  const members = objectMembers(args, declared);
  const text = objectText(members);
  if (text.length <= MAX_ARGUMENTS_CHARS) return text;
  const cap = fairShare(members.map((m) => m.length), MAX_ARGUMENTS_CHARS);
  return objectText(members.map((m) => bounded(m, cap)));
}

/** The largest length `cap` such that the lengths, each cut to `cap`, sum to `total` at most: short arguments leave their room to long ones. */
function fairShare(lengths: number[], total: number): number {
  const sorted = lengths.sort((a, b) => a - b);
  let left = total;
  for (let i = 0; i < sorted.length; i++) {
    const even = Math.floor(left / (sorted.length - i));
    if (sorted[i]! > even) return even;
    left -= sorted[i]!;
  }
  return total;
}

export interface ConfirmationText {
  /** The tool as the client named it. */
  tool: string;
  upstream: string | undefined;
  /** The rule's own message, if it has one. */
  message: string | undefined;
  arguments: unknown;
  /** The called tool's declared parameters (its input schema's properties), shown first; absent when the name finds no tool. */
  declared?: readonly string[] | undefined;
}

/**
 * How the gateway's own questions open: its voice, which no upstream's question may claim (an upstream
 * question in it is refused, see gatewayWordingIn), so that a user can tell the gateway's confirmation
 * from a phishing copy of it.
 */
export const GATEWAY_VOICE = 'Switchboard asks you';

/** The elicitation message: why the user is asked, then exactly what will be sent where. */
export function confirmationMessage(t: ConfirmationText): string {
  const lines = [`${GATEWAY_VOICE} to confirm this tool call before it is sent.`];
  if (t.message) lines.push(t.message);
  lines.push('', `Tool: ${visible(JSON.stringify(cut(t.tool, MAX_NAME)))}`);
  if (t.upstream !== undefined) lines.push(`Upstream: ${visible(JSON.stringify(cut(t.upstream, MAX_NAME)))}`);
  lines.push('Arguments:', shownArguments(t.arguments, t.declared));
  return lines.join('\n');
}
