import type { EndpointConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamCaller, UpstreamPool } from '../upstream/index.js';
import type { ToolGate } from './tool-gate.js';
import type { ToolViews } from './tool-views.js';
import type { TemplateOwners } from './owner-books.js';

/**
 * What a RouterSession needs of its endpoint: its upstreams and naming, and the URI ownership the
 * endpoint learns from every session's lists of shared upstreams. EndpointRouter implements it; the session depends on this
 * and not on the router that creates it, so the two files do not import each other.
 */
export interface EndpointView {
  readonly config: EndpointConfig;
  readonly pools: readonly UpstreamPool[];
  readonly prefixNames: boolean;
  readonly logger: Logger;
  /** Tool pinning's check on every tool definition listed or called; undefined when pinning is off. */
  readonly gate: ToolGate | undefined;
  /** Exposure, curation and exposed names of the tools. */
  readonly tools: ToolViews;
  pool(name: string): UpstreamPool | undefined;
  learnUri(uri: string, upstream: string): void;
  learnTemplate(template: string, upstream: string): void;
  /** The upstream that owns a URI, if the lists have told us (`own`: a session's own templates, ahead of the endpoint's). */
  ownerOfUri(uri: string, own?: TemplateOwners): string | undefined;
  ownerOfTemplate(template: string): string | undefined;
  /** The session closed: the endpoint stops delivering to it. */
  forget(caller: UpstreamCaller): void;
}
