import { isJsonObject as isObject } from './types.js';

type Schema = Record<string, unknown>;

/** The values an enum-like property allows: `enum`, or the titled form's `oneOf`/`anyOf` of `const` (SEP-1330). */
function allowed(schema: Schema): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum;
  const titled = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  return titled?.every((o) => isObject(o) && 'const' in o) ? titled.map((o) => (o as Schema).const) : undefined;
}

function outside(n: number, min: unknown, max: unknown): boolean {
  return (typeof min === 'number' && n < min) || (typeof max === 'number' && n > max);
}

/** What is wrong with one answered value for its property's schema (a primitive of the restricted elicitation schema). */
function valueProblem(schema: Schema, v: unknown): string | undefined {
  const choices = allowed(schema);
  switch (schema.type) {
    case 'string':
      if (typeof v !== 'string') return 'is not a string';
      if (choices && !choices.includes(v)) return 'is not one of the values offered';
      return outside(v.length, schema.minLength, schema.maxLength) ? 'has a length outside minLength..maxLength' : undefined;
    case 'number':
    case 'integer':
      if (typeof v !== 'number' || (schema.type === 'integer' && !Number.isInteger(v))) return `is not ${schema.type === 'integer' ? 'an integer' : 'a number'}`;
      return outside(v, schema.minimum, schema.maximum) ? 'is outside minimum..maximum' : undefined;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'is not a boolean';
    case 'array': {
      if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) return 'is not a list of strings';
      const items = isObject(schema.items) ? allowed(schema.items) : undefined;
      if (items && !v.every((s) => items.includes(s))) return 'holds a value not offered';
      return outside(v.length, schema.minItems, schema.maxItems) ? 'has a number of items outside minItems..maxItems' : undefined;
    }
    default:
      return undefined; // a type the restricted schema does not have: not the gateway's to judge
  }
}

/**
 * What is wrong with an accepted form elicitation's content for the requestedSchema it answers, or undefined:
 * a required property missing, or a declared one of another type, outside its enum or bounds. Properties the
 * schema does not declare are let through (JSON Schema allows them), and so is everything when the schema is
 * not one to read. Formats and patterns are the asking server's to judge.
 */
export function elicitContentProblem(requestedSchema: unknown, content: Record<string, unknown>): string | undefined {
  if (!isObject(requestedSchema) || !isObject(requestedSchema.properties)) return undefined;
  const properties = requestedSchema.properties;
  const required = Array.isArray(requestedSchema.required) ? requestedSchema.required : [];
  for (const name of required) {
    if (typeof name === 'string' && !Object.hasOwn(content, name)) return `"content" lacks ${JSON.stringify(name)}, which the requestedSchema requires`;
  }
  for (const [name, v] of Object.entries(content)) {
    const schema = Object.hasOwn(properties, name) ? properties[name] : undefined;
    const bad = isObject(schema) ? valueProblem(schema, v) : undefined;
    if (bad) return `"content.${name}" ${bad}, as the requestedSchema asks`;
  }
  return undefined;
}
