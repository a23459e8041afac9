import { keptImplementationInfo } from '../observability/implementation-info.js';

/**
 * What the gateway keeps of an initialize's clientInfo: the known string fields, each cut (see
 * keptImplementationInfo). It is logged once and held in the session record (memory or Redis) for the
 * session's life, and the client chooses it whole.
 */
export const keptClientInfo = keptImplementationInfo;
