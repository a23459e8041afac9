import { z } from 'zod';

/** The metrics section: Prometheus /metrics on a listener of its own (like admin). */
export const metricsSchema = z
  .object({
    enabled: z.boolean().default(true),
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(9464),
    /** Not /healthz: the metrics listener answers the liveness probe there (src/observability/metrics-server.ts). */
    path: z
      .string()
      .regex(/^\//)
      .refine((p) => p !== '/healthz', '"/healthz" is the liveness probe the metrics listener answers: choose another path (default /metrics)')
      .default('/metrics'),
    /**
     * Open connections to the metrics listener at most; more are closed at accept. Its callers are a few
     * scrapers; without a cap, anyone reaching the port could hold connections until the process ran out
     * of descriptors, which the MCP listener shares.
     */
    maxConnections: z.number().int().min(1).default(16),
  })
  .strict()
  .prefault({});
