/** A request's params, as the router passes them. */
export type Params = Record<string, unknown> | undefined;

/**
 * A call's params as its upstream is sent them: by the upstream's own name, and without a `task`. The gateway
 * declares no `tasks` capability (it routes no tasks/*), and 2025-11-25 has a receiver without it process a
 * task-augmented request normally, ignoring the augmentation. Passed on, the upstream made a task the client
 * could never poll, or (server-everything, for a tool without task support) refused the call -32602.
 */
export function upstreamCall(params: Params, name: string): Record<string, unknown> {
  if (params?.task === undefined) return { ...params, name };
  const { task: _ignored, ...rest } = params;
  return { ...rest, name };
}

/**
 * The answer to a completion asked of an upstream that offers none (declares no `completions`): nothing to
 * offer. The endpoint advertises completions when any of its upstreams has them, so a client asks them of
 * every prompt and template it is shown; sent on, the request was one that upstream never declared, refused
 * -32601 on every keystroke. A new object each time: a 2026-07-28 answer is shaped in place.
 */
export function noCompletions(): Record<string, unknown> {
  return { completion: { values: [], hasMore: false } };
}

/**
 * logging/setLevel as an instance other sessions share is sent it: debug. One instance has one level for
 * all its sessions, whoever set it last (an errors-only session got info lines, a debug one none); at
 * debug, each session is sent only what its own level lets through (EndpointRouter's notifications).
 */
export function sharedLevel(params: Params): Record<string, unknown> {
  return { ...params, level: 'debug' };
}
