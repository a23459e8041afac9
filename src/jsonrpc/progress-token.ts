/**
 * A value MCP allows as `_meta.progressToken`: a string or an integer (the schema's ["string", "integer"]).
 * Anything else (an object, `true`, `1.5`, `null`) is invalid params, not a request for progress: taken as
 * one, it came back as it was on every notifications/progress, which no conforming client can match.
 */
export function isProgressToken(v: unknown): v is string | number {
  return typeof v === 'string' || Number.isInteger(v);
}
