import { createHash } from 'node:crypto';

/**
 * The params a retry adds or may change: `_meta` (a new progress token, trace context, client info),
 * and the round's own `inputResponses` and `requestState`. Everything else must be what the original
 * request sent (the spec: "the same params").
 */
const ROUND_KEYS: ReadonlySet<string> = new Set(['_meta', 'inputResponses', 'requestState']);

/**
 * SHA-256 (base64url) of a request's params as canonical JSON, without the keys a retry may change.
 * Canonical: object keys in code-unit order at every depth, no whitespace, strings and numbers as
 * JSON.stringify writes them (the JCS rules, RFC 8785, for anything JSON.parse produced), so a client
 * that re-serialises the same params in another key order gets the same digest.
 */
export function digestParams(params: unknown): string {
  const isObject = params !== null && typeof params === 'object' && !Array.isArray(params);
  // Absent params are empty params; anything that is not an object is hashed as it is.
  const text = isObject ? canonicalObject(Object.entries(params).filter(([k]) => !ROUND_KEYS.has(k))) : canonicalJson(params ?? {});
  return createHash('sha256').update(text).digest('base64url');
}

// Entries rather than a rebuilt object: a key named "__proto__" (JSON.parse makes it an own property)
// stays a key instead of becoming a prototype.
function canonicalObject(entries: Array<[string, unknown]>): string {
  const parts: string[] = [];
  for (const [k, v] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (v !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') return canonicalObject(Object.entries(value));
  // Primitives as JSON writes them; what JSON cannot carry (undefined at the top, functions) as null.
  return JSON.stringify(value) ?? 'null';
}
