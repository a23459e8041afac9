import type { z } from 'zod';
import { isPlainObject } from './plain-object.js';

// Reads zod's schema definitions (`_zod.def`, zod 4's documented surface for tools built on schemas)
// to answer one question: which keys does the mapping at a given path of a document accept?

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  values?: unknown[];
}

const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** The schema under optional/default/… wrappers and pipes. */
function unwrap(s: z.ZodType): z.ZodType {
  for (;;) {
    const d = defOf(s);
    if (WRAPPERS.has(d.type) && d.innerType) s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else return s;
  }
}

/** The object schemas a value may be checked against: a union's object options, narrowed by its discriminator when the value has one. */
function objectsFor(s: z.ZodType, value: unknown): z.ZodType[] {
  const u = unwrap(s);
  const d = defOf(u);
  if (d.type === 'object') return [u];
  if (d.type !== 'union' || !d.options) return [];
  const objects = d.options.map(unwrap).filter((o) => defOf(o).type === 'object');
  const key = d.discriminator;
  if (key && isPlainObject(value)) {
    const chosen = objects.filter((o) => {
      const tag = defOf(o).shape?.[key];
      return tag !== undefined && (defOf(unwrap(tag)).values ?? []).includes(value[key]);
    });
    if (chosen.length > 0) return chosen;
  }
  return objects;
}

/** One step down: into a key of a mapping, or an item of a list or record. */
function child(s: z.ZodType, value: unknown, step: PropertyKey): z.ZodType | undefined {
  const u = unwrap(s);
  const d = defOf(u);
  if (d.type === 'array') return d.element;
  if (d.type === 'record') return d.valueType;
  for (const o of objectsFor(u, value)) {
    const next = defOf(o).shape?.[String(step)];
    if (next) return next;
  }
  return undefined;
}

/** The keys the mapping at `path` of `doc` accepts, or undefined when the schema there is not a mapping. */
export function keysAt(schema: z.ZodType, doc: unknown, path: readonly PropertyKey[]): string[] | undefined {
  let s: z.ZodType | undefined = schema;
  let value = doc;
  for (const step of path) {
    s = child(s, value, step);
    if (!s) return undefined;
    value = isPlainObject(value) || Array.isArray(value) ? (value as Record<PropertyKey, unknown>)[step as string] : undefined;
  }
  const objects = objectsFor(s, value);
  if (objects.length === 0) return undefined;
  return [...new Set(objects.flatMap((o) => Object.keys(defOf(o).shape ?? {})))];
}

/**
 * The kinds of scalar the schema takes at `path` of `doc` ("number", "boolean", "string", "enum", …: zod's
 * def types, each option of a union), or none when the path is not in the schema.
 */
export function scalarTypesAt(schema: z.ZodType, doc: unknown, path: readonly PropertyKey[]): Set<string> {
  let s: z.ZodType | undefined = schema;
  let value = doc;
  for (const step of path) {
    s = child(s, value, step);
    if (!s) return new Set();
    value = isPlainObject(value) || Array.isArray(value) ? (value as Record<PropertyKey, unknown>)[step as string] : undefined;
  }
  const u = unwrap(s);
  const d = defOf(u);
  return new Set(d.type === 'union' && d.options ? d.options.map((o) => defOf(unwrap(o)).type) : [d.type]);
}
