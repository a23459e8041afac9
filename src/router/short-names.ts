import { createHash } from 'node:crypto';

/** Hex digits of the hash in a shortened name: 40 bits, so a clash is a rare event the assignment still handles. */
const HASH_CHARS = 10;

/**
 * A name cut to `max` characters: the start of the full name (readable: "github__create_pull_request_re…")
 * and "_" + the first `chars` hex digits of the SHA-256 of the full name. The same on every replica and
 * every restart: nothing in it depends on the process.
 */
export function shortName(full: string, max: number, chars = HASH_CHARS): string {
  const hash = createHash('sha256').update(full).digest('hex').slice(0, chars);
  return `${full.slice(0, max - chars - 1)}_${hash}`;
}

/** One tool to name: its canonical name, the name curation gives it (if any), and how much of its start a short name must keep. */
export interface NameRequest {
  canonical: string;
  rename?: string | undefined;
  /** Characters of the canonical name a shortened name keeps at least: "<upstream>__" and one more, so routing can read the upstream. */
  keep: number;
}

export interface NameAssignment {
  /** canonical → exposed, for every tool that got a name. */
  names: Map<string, string>;
  /** Tools left without a name (their name was taken by a rename or a meta-tool), for the log. */
  shadowed: string[];
}

/**
 * Gives every tool a unique exposed name of at most `max` characters. Collisions are impossible by
 * construction: every name is claimed in one set, in one deterministic order (reserved names, then
 * renames, then names that fit as they are, then shortened names, each group sorted by canonical
 * name), and a claimed name is never given twice. A shortened name that is taken (a name of exactly
 * `max` characters that happens to equal it, or two hashes that agree on their first digits) takes more
 * hash digits, then a counter: the result depends only on the set of names, never on timing.
 */
export function assignNames(requests: readonly NameRequest[], max: number, reserved: readonly string[] = []): NameAssignment {
  const claimed = new Set(reserved);
  const names = new Map<string, string>();
  const shadowed: string[] = [];
  const sorted = [...requests].sort((a, b) => (a.canonical < b.canonical ? -1 : a.canonical > b.canonical ? 1 : 0));
  const claim = (r: NameRequest, exposed: string) => {
    if (claimed.has(exposed)) return false;
    claimed.add(exposed);
    names.set(r.canonical, exposed);
    return true;
  };
  for (const r of sorted) if (r.rename !== undefined && !claim(r, r.rename)) shadowed.push(r.canonical);
  for (const r of sorted) if (r.rename === undefined && r.canonical.length <= max && !claim(r, r.canonical)) shadowed.push(r.canonical);
  for (const r of sorted) {
    if (r.rename !== undefined || r.canonical.length <= max) continue;
    let done = false;
    for (let chars = HASH_CHARS; !done && max - chars - 1 >= r.keep; chars += 4) done = claim(r, shortName(r.canonical, max, chars));
    for (let n = 1; !done; n++) done = claim(r, shortName(`${r.canonical}#${n}`, max));
  }
  return { names, shadowed };
}
