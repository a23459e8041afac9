/**
 * The longest delay a Node.js timer holds: a longer one fires after 1 ms (with a TimeoutOverflowWarning),
 * so a duration past it turned "practically never" into "at once": `server.keepAliveMs: 2147483648`
 * wrote a keep-alive comment to every SSE stream each millisecond.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** Where the config carries data of its own (a JSON Schema, a tool's annotations): its keys are no settings. */
const FREE_FORM = new Set(['schema', 'annotations']);

/**
 * Every duration (a key ending in "Ms", wherever it is) longer than a timer holds, by path. One walk
 * over the parsed config rather than a bound on each field: a field added later is covered too.
 */
export function durationProblems(cfg: unknown): Array<{ path: PropertyKey[]; message: string }> {
  const out: Array<{ path: PropertyKey[]; message: string }> = [];
  const walk = (value: unknown, path: PropertyKey[]): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, i]));
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k.endsWith('Ms') && typeof v === 'number' && v > MAX_DURATION_MS) {
          out.push({ path: [...path, k], message: `at most ${MAX_DURATION_MS} (about 24.8 days): a longer timer fires at once` });
        } else if (!FREE_FORM.has(k)) walk(v, [...path, k]);
      }
    }
  };
  walk(cfg, []);
  return out;
}
