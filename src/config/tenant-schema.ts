import { z } from 'zod';
import { tenantGuardrailsSchema } from './guardrails-schema.js';
import { compileJsonSchema } from './json-schema.js';

// The tenants part of the config schema: grants, rules, argument rules and limits.

const rule = z.union([z.string().min(1), z.object({ match: z.string().min(1), scopes: z.array(z.string()).default([]) }).strict()]);
const ruleSet = z
  .object({ allow: z.array(rule).default(['*']), deny: z.array(z.string().min(1)).default([]) })
  .strict()
  .prefault({});

/** An absolute POSIX path without "." or ".." segments: what a path rule's prefix must be. */
const absolutePrefix = z
  .string()
  .regex(/^\/[^\0\\]*$/, 'an absolute POSIX path such as "/srv/data" (no NUL, no backslash)')
  .refine((p) => !p.split('/').some((seg) => seg === '.' || seg === '..'), 'no "." or ".." segments: write the prefix as the path it means');

/** Constraints on a tool's arguments, checked before the call is forwarded. */
const argumentRule = z
  .object({
    /** Cited in the error the client gets and in the audit line (rule "arguments:<name>"). */
    name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, '1-64 of [A-Za-z0-9._-]'),
    /** Globs over the tool names the client sees (prefixed, e.g. "fs__*"). */
    tools: z.array(z.string().min(1)).min(1),
    /** Each named argument, when present, must be an absolute path under one of `under`; "name[]" for an array of paths. */
    paths: z
      .object({
        arguments: z.array(z.string().regex(/^[^[\]]+(?:\[\])?$/, 'an argument name, or "name[]" for an array of paths')).min(1),
        under: z.array(absolutePrefix).min(1),
      })
      .strict()
      .optional(),
    /** A JSON Schema (draft 2020-12) the arguments object must also satisfy. */
    schema: z.union([z.boolean(), z.record(z.string(), z.unknown())], { error: 'a JSON Schema: an object, or true / false' }).optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (!r.paths && r.schema === undefined) ctx.addIssue({ code: 'custom', path: [], message: 'needs "paths", "schema" or both' });
    usableSchema(r.schema, ctx, ['schema']);
  });

/** A JSON Schema (draft 2020-12) that compiles, else a config error naming why. */
function usableSchema(schema: unknown, ctx: z.RefinementCtx, path: Array<string | number>): void {
  if (schema === undefined) return;
  try {
    compileJsonSchema(schema as boolean | Record<string, unknown>);
  } catch (err) {
    ctx.addIssue({ code: 'custom', path, message: `not a usable JSON Schema (draft 2020-12): ${(err as Error).message}` });
  }
}

/**
 * A tools/call the user must confirm (elicitation) before the gateway forwards it. `when` narrows it to
 * some arguments with the argument rules' matchers: either condition given makes it ask.
 */
const confirmRule = z
  .object({
    /** A glob over tool names as tools.allow sees them (prefixed, e.g. "github__delete_*"). */
    match: z.string().min(1),
    /** Shown to the user above the call's tool, upstream and arguments. */
    message: z.string().min(1).max(1000).optional(),
    when: z
      .object({
        /** Ask when the arguments object satisfies this JSON Schema (draft 2020-12). */
        schema: z.union([z.boolean(), z.record(z.string(), z.unknown())], { error: 'a JSON Schema: an object, or true / false' }).optional(),
        /** Ask when one of these arguments (if present) is not an absolute path under one of `notUnder`; "name[]" for an array of paths. */
        paths: z
          .object({
            arguments: z.array(z.string().regex(/^[^[\]]+(?:\[\])?$/, 'an argument name, or "name[]" for an array of paths')).min(1),
            notUnder: z.array(absolutePrefix).min(1),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    /** How long the user has to answer; then the call is refused. */
    timeoutMs: z.number().int().min(100).max(3_600_000).default(120_000),
    /** A client that cannot ask (no elicitation capability): refuse the call (default), or allow it unconfirmed. */
    ifUnsupported: z.enum(['refuse', 'allow']).default('refuse'),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.when && r.when.schema === undefined && !r.when.paths) ctx.addIssue({ code: 'custom', path: ['when'], message: 'needs "schema", "paths" or both (leave "when" out to ask on every call)' });
    usableSchema(r.when?.schema, ctx, ['when', 'schema']);
  });

export const tenant = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, '1-64 of [A-Za-z0-9._-]'),
    /** Endpoint paths this tenant may use ("*" for all). */
    endpoints: z.array(z.string()).min(1),
    tools: ruleSet,
    resources: ruleSet,
    prompts: ruleSet,
    /** Overrides the hidden-text settings of every endpoint it uses (guardrails-schema.ts); absent: the endpoints' own. */
    guardrails: tenantGuardrailsSchema,
    limits: z
      .object({
        requestsPerSecond: z.number().positive().optional(),
        burst: z.number().int().positive().optional(),
        concurrentRequests: z.number().int().positive().optional(),
        /**
         * How long a request its client cancelled (or whose 2026-07-28 connection dropped) keeps its
         * concurrentRequests slot: its upstream may still be running it (see limits-stage.ts). 0: given back at
         * once; absent: CANCELLED_HOLD_MS.
         */
        cancelledHoldMs: z.number().int().min(0).max(600_000).optional(),
        sessions: z.number().int().positive().optional(),
      })
      .strict()
      .prefault({}),
    /** Argument rules for tools/call; every rule whose tools match the called name must pass. */
    arguments: z
      .array(argumentRule)
      .default([])
      .superRefine((rules, ctx) => {
        const seen = new Set<string>();
        rules.forEach((r, i) => {
          if (seen.has(r.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate argument rule "${r.name}"` });
          seen.add(r.name);
        });
      }),
    /** Tool calls the user must confirm before they are forwarded; the first rule that matches asks. */
    confirm: z.array(confirmRule).default([]),
  })
  .strict();

