export { EndpointRouter } from './endpoint-router.js';
export { RouterSession, mergeCapabilities, type RouteContext } from './router-session.js';
