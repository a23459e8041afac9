import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import type { Exchange } from './exchange.js';
import type { StatedCall, StateSeal } from './modern-service.js';
import { digestParams } from './params-digest.js';
import type { RequestStateSealer } from './request-state.js';

/** The tool name, resource URI or prompt name a request reaches ('' for none): part of what its state binds. */
function targetOf(call: StatedCall): string {
  const t = call.spec.route === 'uri' ? call.params.uri : call.params.name;
  return typeof t === 'string' ? t : '';
}

/** Binds each exchange's requestState to its principal, its request (method, target, arguments, endpoint) and its replica. */
export function exchangeSeal(sealer: RequestStateSealer, replicaId: string): StateSeal {
  const expect = (principal: Principal, call: StatedCall, endpoint: string) => ({
    principal: { issuer: principal.issuer, subject: principal.subject, tenant: principal.tenant },
    method: call.method,
    target: targetOf(call),
    endpoint,
    argumentsDigest: digestParams(call.params),
  });
  return {
    seal: (x: Exchange, principal: Principal, endpoint: string) => {
      // The exchange learns its round's state id: it accepts a retry with that state alone, once.
      const stateId = randomBytes(12).toString('base64url');
      x.sealedState(stateId);
      return sealer.seal({ ...expect(principal, x.first, endpoint), continuationId: x.id, replicaId, stateId });
    },
    open: (token, principal, call, endpoint) => {
      const claims = sealer.open(token, expect(principal, call, endpoint));
      return { continuationId: claims.continuationId, replica: claims.replicaId, stateId: claims.stateId, use: () => sealer.use(claims) };
    },
    spent: (stateId) => sealer.spent(stateId),
  };
}
