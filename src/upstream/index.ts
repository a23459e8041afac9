export type { UpstreamCaller, UpstreamIdentity } from './upstream-caller.js';
export { UpstreamPool } from './upstream-pool.js';
export { UpstreamInstance, type TransportFactory, type Catalogue } from './upstream-instance.js';
export { StdioTransport } from './stdio-transport.js';
export { UpstreamTransports } from './transport-factory.js';
