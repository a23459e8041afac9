/** The flags a capability's object holds that the gateway reads: true, or not declared. */
const FLAGS = ['listChanged', 'subscribe'] as const;

/**
 * An upstream's server capabilities as the gateway reads them: a member is declared only by an object (the
 * schema's shape), and a flag in it (`listChanged`, `subscribe`) only by `true`. Before 2026-12-07 each was
 * read for its truth, so an upstream answering `prompts: "no"` had prompts advertised for it, and
 * `resources: {subscribe: "no"}` resource subscriptions, to every client of its endpoints.
 */
export function declaredCapabilities(raw: unknown): Record<string, any> {
  const out: Record<string, any> = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const [name, value] of Object.entries(raw)) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    let kept = value as Record<string, unknown>;
    for (const flag of FLAGS) {
      if (flag in kept && kept[flag] !== true) {
        const { [flag]: _dropped, ...rest } = kept;
        kept = rest;
      }
    }
    out[name] = kept;
  }
  return out;
}
