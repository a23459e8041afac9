import { posix } from 'node:path';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { ConfirmRuleConfig } from '../config/schema.js';
import { compileJsonSchema } from '../config/json-schema.js';
import { pathArguments, pathOutside, type PathArgument } from './argument-rules.js';
import { globMatch } from './glob.js';

/** What a client that cannot be asked (no form elicitation) gets: refused, or let through unconfirmed. */
export type IfUnsupported = 'refuse' | 'allow';

/** The rule that asks about a call: what the user is told, how long they have, what an unaskable client gets. */
export interface ConfirmRule {
  /** The glob as configured: cited in errors and audit lines (`confirm:<match>`). */
  readonly match: string;
  readonly message: string | undefined;
  readonly timeoutMs: number;
  readonly ifUnsupported: IfUnsupported;
}

class CompiledConfirmRule implements ConfirmRule {
  readonly match: string;
  readonly message: string | undefined;
  readonly timeoutMs: number;
  readonly ifUnsupported: IfUnsupported;
  /** No `when`: every call of a matching tool is asked about. */
  readonly #always: boolean;
  readonly #schema: ValidateFunction | undefined;
  readonly #paths: readonly PathArgument[];
  readonly #notUnder: readonly string[];

  constructor(c: ConfirmRuleConfig) {
    this.match = c.match;
    this.message = c.message;
    this.timeoutMs = c.timeoutMs;
    this.ifUnsupported = c.ifUnsupported;
    this.#always = c.when === undefined;
    this.#schema = c.when?.schema === undefined ? undefined : compileJsonSchema(c.when.schema);
    this.#paths = pathArguments(c.when?.paths?.arguments ?? []);
    this.#notUnder = (c.when?.paths?.notUnder ?? []).map((p) => posix.resolve(p));
  }

  appliesTo(tool: string, canonical: string | undefined): boolean {
    return globMatch(this.match, tool) || (canonical !== undefined && globMatch(this.match, canonical));
  }

  /**
   * Whether these arguments call for asking. Arguments that are not an object are asked about: a
   * condition the gateway cannot read is no reason to skip the question.
   */
  asks(args: unknown): boolean {
    if (this.#always) return true;
    if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) return true;
    const plain = args as Record<string, unknown> | undefined;
    if (this.#schema && this.#schema(plain ?? {})) return true;
    return this.#paths.length > 0 && pathOutside(plain, this.#paths, this.#notUnder) !== undefined;
  }
}

/**
 * One tenant's confirmation rules, compiled once (schemas included). The first rule, in configuration
 * order, whose glob matches the called tool and whose condition holds asks the user.
 */
export class ConfirmRules {
  readonly #rules: readonly CompiledConfirmRule[];

  private constructor(rules: CompiledConfirmRule[]) {
    this.#rules = rules;
  }

  /** Undefined when there are none, so a tenant without any pays one property read per call. */
  static compile(configs: readonly ConfirmRuleConfig[]): ConfirmRules | undefined {
    return configs.length === 0 ? undefined : new ConfirmRules(configs.map((c) => new CompiledConfirmRule(c)));
  }

  /**
   * The rule that asks about calling `tool` with `args`, if any. `canonical`: the tool's
   * `<upstream>__<tool>` name when the endpoint shows it unprefixed, so a rule for `github__delete_*`
   * holds on every endpoint that exposes that upstream.
   */
  find(tool: string, args: unknown, canonical?: string): ConfirmRule | undefined {
    for (const rule of this.#rules) if (rule.appliesTo(tool, canonical) && rule.asks(args)) return rule;
    return undefined;
  }
}
