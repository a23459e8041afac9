export { EndpointRouter } from './endpoint-router.js';
export { mergeCapabilities } from './capabilities.js';
export { RouterSession, type RouteContext } from './router-session.js';
