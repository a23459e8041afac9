import { asyncContextOnHooks, HOOKED_CONTEXT_NOTE } from './async-context-mode.js';
import type { Logger } from './logger.js';
import { NO_TRACING, type Tracing, type TracingOptions } from './tracing.js';
import { resolveTracing, sdkDisabled } from './tracing-options.js';

/**
 * The tracing the config asks for. Off (the default, or OTEL_SDK_DISABLED=true): the no-op, and no
 * OpenTelemetry module is imported at all. On: the SDK, imported here and only here.
 */
export async function loadTracing(o: TracingOptions, logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  if (!o.enabled) return NO_TRACING;
  if (sdkDisabled(env)) {
    logger.warn('tracing.enabled is true but OTEL_SDK_DISABLED=true: tracing is off');
    return NO_TRACING;
  }
  const resolved = resolveTracing(o, env);
  for (const note of resolved.notes) logger.warn(`tracing: ${note}`);
  if (asyncContextOnHooks()) logger.warn(HOOKED_CONTEXT_NOTE);
  const { startOtelTracing } = await import('./otel-tracing.js');
  const tracing = await startOtelTracing(resolved, logger);
  logger.info({ protocol: resolved.protocol, endpoint: resolved.url === undefined ? '(OTEL_EXPORTER_OTLP_* or the default)' : shownEndpoint(resolved.url), sampleRatio: resolved.sampleRatio }, 'tracing on: OpenTelemetry spans exported over OTLP/HTTP');
  return tracing;
}

/** The collector's address as the log shows it: scheme, host and path, without a user, password or query (credentials go there). */
function shownEndpoint(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(not a URL)';
  }
}
