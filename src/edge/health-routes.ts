import type { FastifyInstance } from 'fastify';

/** What readiness depends on, read at every probe. */
export interface Readiness {
  shuttingDown(): boolean;
  /** Why descriptors are running out, or undefined while they are not. */
  exhausted(): string | undefined;
  /** Why the gateway cannot serve new sessions (redis, no upstream ready), or undefined when it can. */
  gatewayNotReady(): string | undefined;
}

/** /healthz (the process answers) and /readyz (it should be sent new sessions). */
export function registerHealthRoutes(fastify: FastifyInstance, readiness: Readiness): void {
  fastify.get('/healthz', async () => ({ status: 'ok' }));
  fastify.get('/readyz', async (_req, reply) => {
    // Not ready as soon as shutdown begins, so load balancers stop sending new sessions here; nor while
    // descriptors run out.
    const shuttingDown = readiness.shuttingDown();
    const exhausted = readiness.exhausted();
    const why = shuttingDown || exhausted ? undefined : readiness.gatewayNotReady();
    const ready = !shuttingDown && !exhausted && why === undefined;
    const status = ready ? 'ready' : shuttingDown ? 'shutting down' : `not ready: ${exhausted ?? why}`;
    return reply.code(ready ? 200 : 503).send({ status });
  });
}
