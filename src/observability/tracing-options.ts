import type { TracingOptions } from './tracing.js';

/** What the exporter and sampler are built from, after the standard OTEL_* variables filled the gaps. */
export interface ResolvedTracing {
  /** Full traces URL, or undefined: the exporter then reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT itself. */
  url: string | undefined;
  protocol: 'http/protobuf' | 'http/json';
  sampleRatio: number;
  /** undefined: OTEL_SERVICE_NAME, else "switchboard". */
  serviceName: string | undefined;
  headers: Record<string, string>;
  recordPrincipal: boolean;
  /** What in the environment was not usable (said once in the log at start). */
  notes: string[];
}

const PROTOCOLS = new Set(['http/protobuf', 'http/json']);

/** OTEL_TRACES_SAMPLER (+ _ARG) as a ratio: always_on, always_off, traceidratio and their parentbased_ forms. */
function envRatio(env: NodeJS.ProcessEnv, notes: string[]): number | undefined {
  const sampler = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  if (sampler === 'always_on' || sampler === 'parentbased_always_on') return 1;
  if (sampler === 'always_off' || sampler === 'parentbased_always_off') return 0;
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  if (arg === undefined || arg.trim() === '') return undefined;
  const n = Number(arg);
  if (Number.isFinite(n) && n >= 0 && n <= 1) return n;
  notes.push(`OTEL_TRACES_SAMPLER_ARG=${JSON.stringify(arg)} is not a ratio between 0 and 1; ignored`);
  return undefined;
}

/**
 * The config file wins; a key it leaves out falls back to its OTEL_* variable, then to the default.
 * The exporter itself also reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT / _HEADERS / _TIMEOUT /
 * _COMPRESSION, and the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
 */
export function resolveTracing(o: TracingOptions, env: NodeJS.ProcessEnv = process.env): ResolvedTracing {
  const notes: string[] = [];
  let protocol = o.protocol;
  const envProtocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol === undefined && envProtocol) {
    if (PROTOCOLS.has(envProtocol)) protocol = envProtocol as ResolvedTracing['protocol'];
    else notes.push(`OTLP protocol ${JSON.stringify(envProtocol)} is not supported (http/protobuf or http/json); using http/protobuf`);
  }
  return {
    url: o.endpoint === undefined ? undefined : `${o.endpoint.replace(/\/+$/, '')}/v1/traces`,
    protocol: protocol ?? 'http/protobuf',
    sampleRatio: o.sampleRatio ?? envRatio(env, notes) ?? 1,
    serviceName: o.serviceName,
    headers: { ...o.headers },
    recordPrincipal: o.recordPrincipal,
    notes,
  };
}

/** OTEL_SDK_DISABLED=true turns tracing off whatever the config says (the SDK's own switch). */
export function sdkDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
}
