export { configSchema, ssePathOf, messagesPathOf } from './schema.js';
export type { Config, ConfigInput, UpstreamConfig, EndpointConfig } from './schema.js';
export { loadConfig, parseConfig, ConfigError } from './load.js';
