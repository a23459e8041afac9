import { posix } from 'node:path';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { ArgumentRuleConfig } from '../config/schema.js';
import { compileJsonSchema } from '../config/json-schema.js';
import { globMatch } from './glob.js';

/** Why a tools/call was refused before it was forwarded; the session turns it into a wire error. */
export interface ArgumentViolation {
  rule: string;
  tool: string;
  /** The argument at fault, when one is (a path argument, or the first segment of a schema error). */
  argument?: string;
  /** What is wrong, with client input quoted and truncated. */
  reason: string;
}

/** The wire error's message: names the rule, the tool and the reason. */
export function violationMessage(v: ArgumentViolation): string {
  return `Argument rule "${v.rule}" refused tool ${quote(v.tool)}: ${v.reason}`;
}

/** Quoted client input is cut here: it goes into error messages, and those into logs. */
const QUOTE_MAX = 100;

/** A client-supplied string as a JSON literal, at most QUOTE_MAX characters of it (control characters escaped). */
export function quote(value: string): string {
  return value.length > QUOTE_MAX ? `${JSON.stringify(value.slice(0, QUOTE_MAX))}…` : JSON.stringify(value);
}

const cut = (s: string) => (s.length > QUOTE_MAX ? `${s.slice(0, QUOTE_MAX)}…` : s);

/**
 * The violation as the client is told it: naming the tool as it called it. Rules match the canonical
 * name, but a renamed or shortened tool must not give that name away (nor a name the client never sent).
 */
export function asCalled(v: ArgumentViolation, calledName: string): ArgumentViolation {
  return { ...v, tool: cut(calledName) };
}

function violation(rule: string, tool: string, argument: string | undefined, reason: string): ArgumentViolation {
  const v: ArgumentViolation = { rule, tool: cut(tool), reason };
  if (argument !== undefined) v.argument = cut(argument);
  return v;
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Why `value` is not a path under one of `prefixes` (normalised, no trailing slash), or undefined
 * when it is. Lexical only: the gateway cannot see the upstream's filesystem, so a symlink inside a
 * prefix that points outside it is invisible here (the upstream's own checks and sandbox remain the
 * second line). Relative paths are refused because the upstream's working directory is unknown; a
 * backslash is refused because it is a separator to a Windows upstream and a filename character here.
 */
export function pathProblem(value: unknown, prefixes: readonly string[]): string | undefined {
  if (typeof value !== 'string') return `must be a string path, not ${describe(value)}`;
  if (value.includes('\0')) return `(${quote(value)}) contains a NUL character`;
  if (value.includes('\\')) return `(${quote(value)}) contains a backslash`;
  if (!value.startsWith('/')) return `(${quote(value)}) is not an absolute path`;
  // resolve (not normalize): "..", "." and duplicate or trailing slashes go, and "/.." stays "/".
  const p = posix.resolve(value);
  for (const prefix of prefixes) if (prefix === '/' || p === prefix || p.startsWith(`${prefix}/`)) return undefined;
  return `(${quote(value)}) is not under ${prefixes.join(', ')}`;
}

/** A JSON pointer's segments, unescaped. */
function segments(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A named path argument ("name", or "name[]" for an array of paths). */
export interface PathArgument {
  name: string;
  array: boolean;
}

/** Argument names as configured: "name[]" is an array of paths. */
export function pathArguments(names: readonly string[]): PathArgument[] {
  return names.map((a) => (a.endsWith('[]') ? { name: a.slice(0, -2), array: true } : { name: a, array: false }));
}

/**
 * The first of `paths` present in `args` that is not an absolute path under one of `under` (resolved
 * prefixes): the argument and why, or undefined when every present one is. Argument rules refuse such
 * a call; confirmation rules ask about it.
 */
export function pathOutside(args: Record<string, unknown> | undefined, paths: readonly PathArgument[], under: readonly string[]): { argument: string; reason: string } | undefined {
  for (const a of paths) {
    // Own properties only: "constructor" or "__proto__" must not be read off the prototype.
    if (!args || !Object.hasOwn(args, a.name)) continue; // an absent optional argument passes
    const value = args[a.name];
    if (!a.array) {
      const problem = pathProblem(value, under);
      if (problem) return { argument: a.name, reason: `argument ${quote(a.name)} ${problem}` };
      continue;
    }
    if (!Array.isArray(value)) return { argument: a.name, reason: `argument ${quote(a.name)} must be an array of string paths, not ${describe(value)}` };
    for (let i = 0; i < value.length; i++) {
      const problem = pathProblem(value[i], under);
      if (problem) return { argument: a.name, reason: `argument ${quote(`${a.name}[${i}]`)} ${problem}` };
    }
  }
  return undefined;
}

class CompiledRule {
  readonly name: string;
  readonly #tools: readonly string[];
  readonly #paths: readonly PathArgument[];
  readonly #under: readonly string[];
  readonly #schema: ValidateFunction | undefined;

  constructor(c: ArgumentRuleConfig) {
    this.name = c.name;
    this.#tools = c.tools;
    this.#paths = pathArguments(c.paths?.arguments ?? []);
    this.#under = (c.paths?.under ?? []).map((p) => posix.resolve(p));
    this.#schema = c.schema === undefined ? undefined : compileJsonSchema(c.schema);
  }

  appliesTo(tool: string): boolean {
    return this.#tools.some((g) => globMatch(g, tool));
  }

  /** The first problem with these arguments (a plain object, or undefined for none sent). */
  check(tool: string, args: Record<string, unknown> | undefined): ArgumentViolation | undefined {
    const outside = pathOutside(args, this.#paths, this.#under);
    if (outside) return this.#violation(tool, outside.argument, outside.reason);
    if (this.#schema && !this.#schema(args ?? {})) {
      const e = this.#schema.errors?.[0];
      const at = segments(e?.instancePath ?? '');
      const params = (e?.params ?? {}) as Record<string, unknown>;
      let what = `${e?.message ?? 'does not match'}`;
      // The offending names are client input: quoted and cut like values.
      if (typeof params.additionalProperty === 'string') what += ` (${quote(params.additionalProperty)})`;
      if (typeof params.propertyName === 'string') what += ` (${quote(params.propertyName)})`;
      const reason = at.length === 0 ? `the arguments ${what}` : `argument ${quote(at.join('/'))} ${what}`;
      const argument = at[0] ?? [params.missingProperty, params.additionalProperty].find((p) => typeof p === 'string');
      return this.#violation(tool, argument as string | undefined, `${reason} (the rule's schema)`);
    }
    return undefined;
  }

  #violation(tool: string, argument: string | undefined, reason: string): ArgumentViolation {
    return violation(this.name, tool, argument, reason);
  }
}

/**
 * One tenant's argument rules, compiled once at startup (schemas included). Every rule whose tool
 * globs match the called name must pass, in configuration order; the first failure is reported.
 */
export class ArgumentRules {
  readonly #rules: readonly CompiledRule[];

  private constructor(rules: CompiledRule[]) {
    this.#rules = rules;
  }

  /** Undefined when there are no rules, so a tenant without any pays one property read per call. */
  static compile(configs: readonly ArgumentRuleConfig[]): ArgumentRules | undefined {
    return configs.length === 0 ? undefined : new ArgumentRules(configs.map((c) => new CompiledRule(c)));
  }

  /**
   * `canonical`: the tool's `<upstream>__<tool>` name when the endpoint shows it unprefixed. A rule
   * written for `fs__*` then holds on every endpoint that exposes that upstream, prefixed or not.
   */
  check(tool: string, args: unknown, canonical?: string): ArgumentViolation | undefined {
    let plain: Record<string, unknown> | undefined;
    for (const rule of this.#rules) {
      if (!rule.appliesTo(tool) && !(canonical !== undefined && rule.appliesTo(canonical))) continue;
      if (args !== undefined) {
        // MCP says an object; anything else would let a rule's named arguments go unseen.
        if (args === null || typeof args !== 'object' || Array.isArray(args)) {
          return violation(rule.name, tool, undefined, `the arguments must be an object, not ${describe(args)}`);
        }
        plain = args as Record<string, unknown>;
      }
      const v = rule.check(tool, plain);
      if (v) return v;
    }
    return undefined;
  }
}
