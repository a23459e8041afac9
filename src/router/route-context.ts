import type { Cancellation } from '../jsonrpc/cancellation.js';
import type { RequestId } from '../jsonrpc/types.js';
import type { UpstreamReach } from './capabilities.js';
import type { DefinitionScreen } from './definition-screen.js';

/** What the router is told of one client request besides its method and params. */
export interface RouteContext {
  signal: Cancellation;
  /** The client's id for this request. */
  requestId: RequestId;
  onProgress?: ((params: Record<string, unknown>) => void) | undefined;
  /** Checks a tool's definition before the call is forwarded (throws to refuse it). */
  checkDefinition?: ((definition: Record<string, unknown>) => void) | undefined;
  /** The size on the wire of the upstream answer passed on unchanged, when known (written by the upstream side). */
  resultBytes?: number | undefined;
  /** The caller's check of the definitions it is shown or calls (hidden text); undefined: none. */
  screen?: DefinitionScreen | undefined;
  /** Set when the called tool's definition was found: the name is a tool (a bounded metrics label). */
  toolFound?: boolean | undefined;
  /** A list that leaves out an upstream that fails, whatever failureMode says: the listing that only learns who owns which URI. */
  partial?: boolean | undefined;
  /** The caller's tenant: a list counts the failure of an upstream it may be shown an item of only (mayShowOf); undefined: of every upstream. */
  tenant?: UpstreamReach | undefined;
}
