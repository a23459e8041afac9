import { createHash } from 'node:crypto';

/**
 * JSON with every object's keys sorted, recursively: the same definition always gives the same text,
 * whatever order a server happens to serialise its schema keys in. Like JSON.stringify, undefined
 * members are left out, so an absent outputSchema and one reported as undefined hash alike.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined || typeof v === 'function') continue;
    parts.push(`${JSON.stringify(k)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * The pin of a tool: SHA-256 (hex) over its name, description, input and output schema exactly as the
 * upstream reports them (the upstream's own name, never the gateway's prefixed one). These are what a
 * model reads and obeys, so a change to any of them is what a "rug pull" needs. Title and annotations
 * are not part of the pin: a client that trusts hints such as readOnlyHint is not covered by it.
 */
export function toolPinHash(tool: Readonly<Record<string, unknown>>): string {
  const text = canonicalJson({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema });
  return createHash('sha256').update(text).digest('hex');
}

const SUMMARY_CHARS = 200;

/** What an operator reads before approving a change: the start of the new description, on one line. */
export function toolSummary(tool: { description?: unknown }): string {
  if (typeof tool.description !== 'string') return '';
  const flat = tool.description.replace(/\s+/g, ' ').trim();
  return flat.length > SUMMARY_CHARS ? `${flat.slice(0, SUMMARY_CHARS - 1)}…` : flat;
}
