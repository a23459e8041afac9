import { z } from 'zod';

// The guardrails part of the config schema: hidden-text scanning on endpoints, and a tenant's override.

/**
 * What the gateway does with hidden text it finds: nothing (off: not even scanned), audit it (log line
 * and metric), strip it (and audit), or block what carries it (and audit). See README, "Guardrails".
 */
export const hiddenTextAction = z.enum(['off', 'audit', 'strip', 'block']);

/** Regular expressions are matched with these flags: case-insensitive, Unicode. */
export const PATTERN_FLAGS = 'iu';

/**
 * A text pattern ("ignore (all )?previous instructions"): a JavaScript regular expression, matched
 * case-insensitively on each string with its hidden characters removed. One that can match the empty
 * string would match everywhere, and is refused.
 */
const pattern = z
  .string()
  .min(1)
  .max(1000)
  .superRefine((p, ctx) => {
    let re: RegExp;
    try {
      re = new RegExp(p, PATTERN_FLAGS);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `not a usable regular expression (JavaScript syntax, flags "${PATTERN_FLAGS}"): ${(err as Error).message}` });
      return;
    }
    if (re.test('')) ctx.addIssue({ code: 'custom', message: 'matches the empty string, so it would match everywhere: make it match some text' });
    if (hasNumberedBackreference(p)) {
      ctx.addIssue({ code: 'custom', message: 'has a numbered backreference (\\1 …): the patterns are joined into one expression, where it would name another pattern\'s group; name the group and refer to it as \\k<name>' });
    }
  });

/**
 * A `\1`…`\9` outside a character class (with the "u" flag one inside a class does not compile). Joined
 * after a pattern with groups, it would count theirs: `(\w)\1` after `(ignore) all` names "ignore"'s
 * group, unset in its own alternative, so it matches any letter.
 */
function hasNumberedBackreference(p: string): boolean {
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      if (!inClass && /[1-9]/.test(p[i + 1] ?? '')) return true;
      i++; // the escaped character, whatever it is
    } else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
  }
  return false;
}

/** The patterns as the scanner matches them: one expression, each pattern a group of its own. */
export function joinPatterns(list: readonly string[]): string {
  return list.map((p) => `(?:${p})`).join('|');
}

/** Why `list` cannot be matched as one expression, if it cannot: patterns that each compile may not together (a group name twice). */
function joinedError(list: readonly string[]): string | undefined {
  try {
    new RegExp(joinPatterns(list), PATTERN_FLAGS);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The first pattern of `list` that the ones before it cannot be joined with (one that fails alone is reported as such). */
function firstUnjoinable(before: readonly string[], list: readonly string[]): { index: number; error: string } | undefined {
  if (joinedError([...before, ...list]) === undefined) return undefined;
  const kept = [...before];
  for (const [index, p] of list.entries()) {
    if (joinedError([p]) !== undefined) continue;
    const error = joinedError([...kept, p]);
    if (error !== undefined) return { index, error };
    kept.push(p);
  }
  return undefined;
}

const patterns = z
  .array(pattern)
  .max(100)
  .superRefine((list, ctx) => {
    const bad = firstUnjoinable([], list);
    if (bad) ctx.addIssue({ code: 'custom', path: [bad.index], message: `cannot be matched together with the patterns before it in this list (they are joined into one expression): ${bad.error}` });
  });

/**
 * Hosts a result's or definition's images may come from (see outside-images.ts): a host name
 * (`img.example.com`), a domain's hosts (`*.example.com`), or `*` for any (no image is then found).
 */
const imageHosts = z
  .array(z.string().regex(/^(?:\*|(?:\*\.)?[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])$/i, 'a host name (img.example.com), *.domain (every host under it), or *'))
  .max(1000);

/** An endpoint's hidden-text scanning: every key optional, all off by default. */
const hiddenText = z
  .object({
    /** Tool, prompt and resource-template definitions, scanned once per definition (cached by its content). */
    definitions: hiddenTextAction.default('off'),
    /** Results of tools/call (text content, structured content), prompts/get and resources/read, scanned per call. */
    results: hiddenTextAction.default('off'),
    patterns: patterns.default([]),
    /** With scanning on, an image from any other host is found (kind image); empty by default: every outside host. */
    imageHosts: imageHosts.default([]),
  })
  .strict()
  .prefault({});

export const guardrailsSchema = z.object({ hiddenText }).strict().prefault({});

/** A tenant's override of its endpoints' settings: each key it sets replaces the endpoint's, on every endpoint. */
export const tenantGuardrailsSchema = z
  .object({
    hiddenText: z
      .object({ definitions: hiddenTextAction.optional(), results: hiddenTextAction.optional(), patterns: patterns.optional(), imageHosts: imageHosts.optional() })
      .strict()
      .optional(),
  })
  .strict()
  .optional();

export type HiddenTextAction = z.output<typeof hiddenTextAction>;
export type HiddenTextConfig = z.output<typeof hiddenText>;
export type TenantHiddenTextConfig = NonNullable<NonNullable<z.output<typeof tenantGuardrailsSchema>>['hiddenText']>;

type PatternSources = {
  endpoints?: ReadonlyArray<{ guardrails: { hiddenText: { patterns: readonly string[] } } }>;
  tenants?: ReadonlyArray<{ guardrails?: { hiddenText?: { patterns?: readonly string[] | undefined } | undefined } | undefined }>;
};

/** Every pattern configured anywhere, endpoints' first, once each: what a pin review scans with (see reviewScanner). */
export function reviewPatterns(config: PatternSources): string[] {
  return [...new Set(patternLists(config).flatMap((l) => l.list))];
}

function patternLists(config: PatternSources): Array<{ path: Array<string | number>; list: readonly string[] }> {
  return [
    ...(config.endpoints ?? []).map((e, i) => ({ path: ['endpoints', i, 'guardrails', 'hiddenText', 'patterns'], list: e.guardrails.hiddenText.patterns })),
    ...(config.tenants ?? []).map((t, i) => ({ path: ['tenants', i, 'guardrails', 'hiddenText', 'patterns'], list: t.guardrails?.hiddenText?.patterns ?? [] })),
  ];
}

/**
 * Patterns of different lists that cannot be joined into the pin review's one expression (each list's own
 * join is checked with it): refused here, at the later one's path, or the gateway fails at start or reload.
 */
export function reviewPatternProblems(config: PatternSources): Array<{ path: Array<string | number>; message: string }> {
  const problems: Array<{ path: Array<string | number>; message: string }> = [];
  const kept: string[] = [];
  for (const { path, list } of patternLists(config)) {
    if (firstUnjoinable([], list)) continue; // reported as its own list's problem
    const fresh = list.filter((p) => !kept.includes(p));
    const bad = firstUnjoinable(kept, fresh);
    if (bad) {
      const message = `cannot be matched together with a pattern configured elsewhere (a pin review joins every endpoint's and tenant's patterns into one expression): ${bad.error}`;
      problems.push({ path: [...path, list.indexOf(fresh[bad.index]!)], message });
    }
    kept.push(...fresh.filter((p, i) => !bad || i < bad.index));
  }
  return problems;
}
