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
