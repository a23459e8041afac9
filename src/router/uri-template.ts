/**
 * Which URIs a resource template (RFC 6570) describes: its literal text as written, each expression as a
 * run of the characters its expansion may hold. A simple `{var}` stays within a path segment (its
 * expansion escapes `/`, `?` and `#`); `{+var}` and `{#var}` may hold any; `{/var}`, `{.var}`, `{;var}`
 * no query or fragment; `{?var}` and `{&var}` no fragment.
 */
type Token = string | ((c: string) => boolean);

export interface TemplateMatcher {
  /** The template's text before its first "{": only a URI that starts with it is matched. */
  readonly prefix: string;
  /** One per literal character, one per expression. */
  readonly tokens: readonly Token[];
  /** Characters of literal text: of two templates a URI matches, the one with more says more. */
  readonly literal: number;
}

const EXPRESSION = /\{([^{}]*)\}/g;
const SEGMENT = (c: string) => c !== '/' && c !== '?' && c !== '#';
const ANY = () => true;
const PATH = (c: string) => c !== '?' && c !== '#';
const QUERY = (c: string) => c !== '#';

function run(body: string): Token {
  const op = body[0];
  if (op === '+' || op === '#') return ANY;
  if (op === '/' || op === '.' || op === ';') return PATH;
  return op === '?' || op === '&' ? QUERY : SEGMENT;
}

/** Undefined for a template that is not well formed, or that starts with an expression (it would claim every URI). */
export function templateMatcher(template: string): TemplateMatcher | undefined {
  const tokens: Token[] = [];
  let last = 0;
  for (const m of template.matchAll(EXPRESSION)) {
    tokens.push(...template.slice(last, m.index));
    tokens.push(run(m[1]!));
    last = m.index + m[0].length;
  }
  tokens.push(...template.slice(last));
  const literal = tokens.filter((t) => typeof t === 'string');
  if (literal.includes('{') || literal.includes('}') || typeof tokens[0] !== 'string') return undefined;
  const first = template.indexOf('{');
  return { prefix: first < 0 ? template : template.slice(0, first), tokens, literal: literal.length };
}

/**
 * Whether the template describes `uri`: every way through the template followed at once, one character
 * of the URI at a time (time bounded by the lengths of both, whatever they are: a backtracking regular
 * expression of two `{+var}` took seconds on a URI of a few thousand slashes).
 */
export function matchesTemplate(m: TemplateMatcher, uri: string): boolean {
  if (!uri.startsWith(m.prefix)) return false;
  const t = m.tokens;
  let on = new Uint8Array(t.length + 1);
  let next = new Uint8Array(t.length + 1);
  on[0] = 1;
  for (let i = 0; i < t.length; i++) if (on[i] && typeof t[i] !== 'string') on[i + 1] = 1;
  for (const c of uri) {
    next.fill(0);
    let any = false;
    for (let i = 0; i < t.length; i++) {
      if (!on[i]) continue;
      const tok = t[i]!;
      if (typeof tok === 'string' ? tok === c && (next[i + 1] = 1) : tok(c) && (next[i] = 1)) any = true;
    }
    if (!any) return false;
    for (let i = 0; i < t.length; i++) if (next[i] && typeof t[i] !== 'string') next[i + 1] = 1;
    [on, next] = [next, on];
  }
  return on[t.length] === 1;
}
