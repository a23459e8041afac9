export { ClientSession, SERVER_INFO, type SessionState } from './client-session.js';
export { HAND_BACK_REASON, handedOver, SessionRegistry, SHUTDOWN_REASON, TAKEN_OVER_REASON } from './session-registry.js';
export type { SessionRecord } from './session-store.js';
export { principalOf } from './session-store.js';
export { STREAMS_KEPT_PER_SESSION, type EventStore, type StoredEvent } from './event-store.js';
export { MemoryEventStore } from './memory-event-store.js';
export { SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION, isSupportedVersion, negotiateVersion } from './protocol-versions.js';
export { NO_OBSERVER, type SessionObserver } from './session-observer.js';
