import type { z } from 'zod';
import { closest } from './did-you-mean.js';
import { WRITTEN_VALUE, writtenUrlShown } from './http-url.js';
import { keysAt } from './schema-keys.js';

/**
 * zod's issues as one line per problem, each naming its path: an unknown key says which key was
 * probably meant (and the "missing" report of that key, the same mistake seen from the other side, is
 * dropped), a wrong choice among fixed values says which one was probably meant, and a union that
 * fails reports the branch the value was written for rather than "Invalid input".
 */

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

export function formatPath(path: Path): string {
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)), '') || '(root)';
}

const quoted = (v: unknown) => JSON.stringify(v);
/**
 * A value as a problem shows it: a scalar quoted, a mapping or list only named. A whole mapping quoted
 * carried every value under it into the log, the reload answer and the console (an upstream's
 * clientSecret with it), where the config view itself redacts them.
 */
const shown = (v: unknown): string => (Array.isArray(v) ? 'a list' : v !== null && typeof v === 'object' ? 'a mapping' : quoted(v));

function valueAt(doc: unknown, path: Path): unknown {
  let v = doc;
  for (const step of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[step as string] : undefined;
  return v;
}

const suggestion = (word: unknown, candidates: readonly unknown[]): string => {
  if (typeof word !== 'string') return '';
  const hit = closest(word, candidates.filter((c): c is string => typeof c === 'string'));
  return hit === undefined ? '' : `; did you mean ${quoted(hit)}?`;
};

interface Problem {
  path: Path;
  text: string;
}

/**
 * Unknown keys: each one that looks like a misspelling at its own path with the key most likely meant;
 * the others of one mapping in one line, with the keys that are allowed there.
 */
function unknownKeys(issue: Extract<Issue, { code: 'unrecognized_keys' }>, path: Path, schema: z.ZodType, doc: unknown, meant: Set<string>): Problem[] {
  const known = keysAt(schema, doc, path) ?? [];
  const present = valueAt(doc, path) as Record<string, unknown> | undefined;
  const out: Problem[] = [];
  const unexplained: string[] = [];
  for (const key of issue.keys) {
    const hit = closest(key, known.filter((k) => present?.[k] === undefined));
    if (hit === undefined) {
      unexplained.push(key);
      continue;
    }
    meant.add(formatPath([...path, hit]));
    out.push({ path: [...path, key], text: `unknown key; did you mean ${quoted(hit)}?` });
  }
  const allowed = known.length > 0 ? ` (allowed here: ${known.join(', ')})` : '';
  if (unexplained.length === 1) out.push({ path: [...path, unexplained[0]!], text: `unknown key${allowed}` });
  if (unexplained.length > 1) out.push({ path, text: `unknown keys ${unexplained.map(quoted).join(', ')}${allowed}` });
  return out;
}

/** A union no branch accepted: the branch written for (a mapping for a mapping), else what each branch expects. */
function union(issue: Extract<Issue, { code: 'invalid_union' }>, path: Path, schema: z.ZodType, doc: unknown, meant: Set<string>): Problem[] {
  const value = valueAt(doc, path);
  // A discriminated union names its discriminator's values (zod sets them; its types leave them out).
  const options = (issue as { discriminator?: string; options?: unknown[] }).options;
  if (issue.discriminator !== undefined && options) {
    const choices = options.map(quoted).join(', ');
    return [{ path, text: value === undefined ? `missing: one of ${choices}` : `${shown(value)} is not one of ${choices}${suggestion(value, options)}` }];
  }
  // A message the schema wrote for this union says it best (zod's own is "Invalid input").
  if (issue.message !== 'Invalid input') return [{ path, text: issue.message }];
  // A branch whose complaints are about the value's contents, not its kind, is the one it was written for.
  const kindMismatch = (branch: Issue[]) => branch.some((i) => i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value'));
  const written = issue.errors.filter((b) => !kindMismatch(b));
  if (written.length === 1) return written[0]!.flatMap((i) => describe(i, path, schema, doc, meant));
  const expected = issue.errors.flatMap((b) => b.filter((i) => i.path.length === 0)).map((i) => (i.code === 'invalid_value' ? i.values.map(quoted).join(' or ') : i.code === 'invalid_type' ? `a${/^[aeiou]/.test(i.expected) ? 'n' : ''} ${i.expected}` : i.message));
  return [{ path, text: expected.length > 0 ? `expected ${[...new Set(expected)].join(' or ')}, got ${shown(value)}` : issue.message }];
}

function describe(issue: Issue, base: Path, schema: z.ZodType, doc: unknown, meant: Set<string>): Problem[] {
  const path = [...base, ...issue.path];
  switch (issue.code) {
    case 'unrecognized_keys':
      return unknownKeys(issue, path, schema, doc, meant);
    case 'invalid_union':
      return union(issue, path, schema, doc, meant);
    case 'invalid_value':
      return [{ path, text: `${issue.message}${suggestion(valueAt(doc, path), issue.values)}` }];
    case 'invalid_type':
      if (valueAt(doc, path) === undefined) return [{ path, text: `missing (${issue.expected})` }];
      return [{ path, text: issue.message }];
    case 'custom':
      // The value as written ("${MCP_URL}"), not as interpolated: the message itself never quotes a value that may be a secret,
      // and a URL written out loses its user information and query, as GET /config shows it.
      if (issue.params?.[WRITTEN_VALUE] === true) {
        const written = valueAt(doc, path);
        return [{ path, text: `${shown(typeof written === 'string' ? writtenUrlShown(written) : written)} ${issue.message}` }];
      }
      return [{ path, text: issue.message }];
    default:
      return [{ path, text: issue.message }];
  }
}

/** One line per problem, in the order zod found them: "path: what is wrong". */
export function describeIssues(issues: readonly Issue[], schema: z.ZodType, doc: unknown): string[] {
  const meant = new Set<string>();
  const problems = issues.flatMap((i) => describe(i, [], schema, doc, meant));
  const lines = problems
    // A key reported missing next to an unknown key that meant it: one mistake, said once.
    .filter((p) => !(p.text.startsWith('missing') && meant.has(formatPath(p.path))))
    .map((p) => `${formatPath(p.path)}: ${p.text}`);
  return [...new Set(lines)];
}
