/** Variables a child needs to find its interpreter and behave; nothing that could carry a secret. */
const PASSTHROUGH = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];

/** The child's complete environment: the declared variables and the harmless basics, nothing else. */
export function childEnv(declared: Record<string, string>, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of PASSTHROUGH) if (parent[k] !== undefined) env[k] = parent[k]!;
  return { ...env, ...declared };
}
