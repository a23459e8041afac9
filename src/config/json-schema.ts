import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

/**
 * JSON Schema (draft 2020-12) for tenant argument overlays, through ajv. z.fromJSONSchema was tried
 * first and rejected: it silently ignores constraints whose schema has no `type` (`{maxLength: 3}`,
 * type-less `allOf` branches), compiles `pattern` without the unicode flag and calls 1e20 not an
 * integer. A policy that quietly enforces less than it says is worse than none.
 */

// ajv-formats is CommonJS: under NodeNext its default import is `module.exports`, which carries `.default`.
const addFormats = formats.default;

const OPTIONS = {
  // A typo ("maxLenght"), an unknown format or a non-number bound is refused at load, not ignored.
  strictSchema: true,
  strictNumbers: true,
  // Type-less constraints are valid JSON Schema and common in hand-written overlays.
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  logger: false,
} as const;

let metaValidator: Ajv2020 | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Compiles one overlay, or throws an Error saying why it cannot be. Each overlay gets an instance of
 * its own, so an `$id` in one tenant's schema can never resolve a `$ref` in another's; the meta-schema
 * check, the costly part, runs on one shared instance. Startup only: never called per request.
 */
export function compileJsonSchema(schema: boolean | Record<string, unknown>): ValidateFunction {
  const key = typeof schema === 'object' ? schema : undefined;
  const known = key && compiled.get(key);
  if (known) return known;
  if (!metaValidator) {
    metaValidator = new Ajv2020(OPTIONS);
    addFormats(metaValidator);
  }
  if (!metaValidator.validateSchema(schema)) throw new Error(metaValidator.errorsText(metaValidator.errors, { dataVar: 'schema' }));
  const ajv = new Ajv2020({ ...OPTIONS, validateSchema: false });
  addFormats(ajv);
  // No $ref reaches the network: ajv has no loadSchema, so a remote reference fails here.
  const validate = ajv.compile(schema);
  if (key) compiled.set(key, validate);
  return validate;
}
