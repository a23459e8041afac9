export { Policy } from './policy.js';
export { TenantPolicy, ALLOW_ALL } from './tenant-policy.js';
export type { Decision, CatalogueKind } from './decision.js';
export { MemoryLimitCounters, type LimitCounters } from './limit-counters.js';
export { AuditLog, type AuditEvent } from './audit-log.js';
export { globMatch } from './glob.js';
export { SessionGuard, targetOf } from './session-guard.js';
