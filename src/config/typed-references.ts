import type { z } from 'zod';
import type { Path } from './interpolate.js';
import { formatPath } from './problems.js';
import { scalarTypesAt } from './schema-keys.js';

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const BOOLEAN = /^(?:true|false)$/i;

const at = (doc: unknown, path: Path): unknown => path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k as string] : undefined), doc);

/**
 * Environment variables are text, so `port: ${PORT}` gave the string "8080" where the schema wants a
 * number, and no config could take a number or a boolean from the environment. A value written as exactly
 * one reference now becomes the number or boolean its key wants (where a string would do too, it stays a
 * string). One that does not read as such is a problem quoting the value as written, never the
 * variable's value. Changes `value` (interpolate's fresh copy) in place.
 */
export function typeReferences(value: unknown, references: readonly Path[], schema: z.ZodType, written: unknown): string[] {
  const problems: string[] = [];
  for (const path of references) {
    const types = scalarTypesAt(schema, value, path);
    if (types.has('string') || !(types.has('number') || types.has('boolean'))) continue;
    const parent = at(value, path.slice(0, -1)) as Record<PropertyKey, unknown>;
    const key = path[path.length - 1]! as string;
    const text = String(parent[key]).trim();
    if (types.has('number') && NUMBER.test(text)) parent[key] = Number(text);
    else if (types.has('boolean') && BOOLEAN.test(text)) parent[key] = text.toLowerCase() === 'true';
    else problems.push(`${formatPath(path)}: ${JSON.stringify(at(written, path))} ${types.has('number') ? "is not a number: the variable's value must be one (digits, optionally with a sign and a decimal point)" : "is not a boolean: the variable's value must be true or false"}`);
  }
  return problems;
}
