import type { Config, StdioUpstreamConfig } from './schema.js';

/** Why every process of an upstream runs as one user id in the host's pid namespace, or undefined when not. */
function sharedUser(u: StdioUpstreamConfig, gatewayUid: number): string | undefined {
  if (u.sandbox === 'none') return "sandbox none: the gateway's own";
  // bubblewrap: each process has a pid namespace of its own, so none sees another's /proc entry.
  if (u.sandbox.type !== 'limits') return undefined;
  if (u.sandbox.user !== undefined) return `sandbox.user ${u.sandbox.user.uid}`;
  // A root gateway gives each process a user id of its own (UidPool); any other starts them all as itself.
  return gatewayUid === 0 ? undefined : `limits on a gateway running as uid ${gatewayUid}: its own`;
}

/**
 * A per-session stdio upstream hands each process its user's token (tokenEnv): per-session is required so
 * that no other session reaches it. Processes of one user id in one pid namespace reach each other: one can
 * read another's /proc/<pid>/environ (its token) or ptrace it, so one session's process, made to run code by
 * what its user sent it, takes every other user's token. Valid, and said, so that it is a choice.
 */
export function sharedUserTokenWarnings(cfg: Config, gatewayUid: number = process.getuid?.() ?? 0): string[] {
  return cfg.upstreams.flatMap((u, i) => {
    if (u.transport !== 'stdio' || u.tokenEnv === undefined) return [];
    const why = sharedUser(u, gatewayUid);
    if (why === undefined) return [];
    return [
      `upstreams[${i}] ("${u.name}"): each session's process holds its user's token in ${u.tokenEnv}, and all of them run as one user id (${why}) without a pid namespace of their own: one session's process can read another's token from /proc/<pid>/environ or ptrace it; use the bubblewrap sandbox (the default), or limits without sandbox.user on a gateway running as root (a user id per process)`,
    ];
  });
}
