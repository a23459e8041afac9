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
  });

const patterns = z.array(pattern).max(100);

/** An endpoint's hidden-text scanning: every key optional, all off by default. */
const hiddenText = z
  .object({
    /** Tool, prompt and resource-template definitions, scanned once per definition (cached by its content). */
    definitions: hiddenTextAction.default('off'),
    /** Results of tools/call (text content, structured content), prompts/get and resources/read, scanned per call. */
    results: hiddenTextAction.default('off'),
    patterns: patterns.default([]),
  })
  .strict()
  .prefault({});

export const guardrailsSchema = z.object({ hiddenText }).strict().prefault({});

/** A tenant's override of its endpoints' settings: each key it sets replaces the endpoint's, on every endpoint. */
export const tenantGuardrailsSchema = z
  .object({
    hiddenText: z
      .object({ definitions: hiddenTextAction.optional(), results: hiddenTextAction.optional(), patterns: patterns.optional() })
      .strict()
      .optional(),
  })
  .strict()
  .optional();

export type HiddenTextAction = z.output<typeof hiddenTextAction>;
export type HiddenTextConfig = z.output<typeof hiddenText>;
export type TenantHiddenTextConfig = NonNullable<NonNullable<z.output<typeof tenantGuardrailsSchema>>['hiddenText']>;
