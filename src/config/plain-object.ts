/** A YAML mapping (or JSON object): not null, not a list. Config files are checked with it before the schema runs. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
