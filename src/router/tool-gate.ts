/** Why a tool is kept from clients: the message and data of the error a call to it gets. */
export interface ToolBlock {
  message: string;
  details: Record<string, unknown>;
}

/**
 * A check on each tool definition an upstream reports, before a client sees or calls it (tool pinning:
 * src/policy/tool-pins.ts). Injected, so that the router does not depend on the policy layer. Answers
 * synchronously when it knows the definition already, which is the case on every call but the first.
 */
export interface ToolGate {
  /** undefined: the tool passes. `tool` is the definition as the upstream reported it (its own name). */
  check(upstream: string, tool: Record<string, unknown>): ToolBlock | undefined | Promise<ToolBlock | undefined>;
}
