import { z } from 'zod';
import { HEADER_NAME } from './header-schema.js';
import { httpUrl } from './http-url.js';

/** Visible ASCII and spaces only: a CR or LF in a value would split the header. */
const headerValue = z.string().regex(/^[\x20-\x7e]*$/, 'printable ASCII without line breaks');

/**
 * OpenTelemetry traces (README "Tracing"). Off by default: with `enabled: false` no OpenTelemetry SDK
 * module is loaded. Keys left out fall back to the standard OTEL_* variables, then to the defaults
 * the README names (src/observability/tracing-options.ts resolves them).
 */
export const tracingSchema = z
  .object({
    enabled: z.boolean().default(false),
    /** The collector's OTLP/HTTP base URL (as OTEL_EXPORTER_OTLP_ENDPOINT); spans go to <endpoint>/v1/traces. */
    endpoint: httpUrl('tracing.endpoint (spans are exported to it)').optional(),
    protocol: z.enum(['http/protobuf', 'http/json']).optional(),
    /** The share of new traces kept (0..1); a client's sampled flag is followed for the traces it starts. */
    sampleRatio: z.number().min(0).max(1).optional(),
    serviceName: z.string().min(1).optional(),
    /** Sent with every export (a collector's API key): `${VAR}` keeps the secret out of the file. */
    headers: z
      .record(z.string(), headerValue)
      .superRefine((h, ctx) => {
        for (const k of Object.keys(h)) if (!HEADER_NAME.test(k)) ctx.addIssue({ code: 'custom', path: [k], message: 'not an HTTP header name (letters, digits, "-")' });
      })
      .default({}),
    /** Tenant and subject as span attributes: off by default, they identify people. */
    recordPrincipal: z.boolean().default(false),
    /**
     * A client's trace context (traceparent headers or params._meta): `parent` continues it (its trace
     * id, sampled flag, tracestate and baggage); `link` starts the gateway's own trace and links it, for a
     * gateway whose clients are not trusted to choose what it records or what its upstreams are told.
     */
    callerContext: z.enum(['parent', 'link']).default('parent'),
  })
  .strict()
  .prefault({});
