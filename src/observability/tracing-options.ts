import type { TracingOptions } from './tracing.js';

/** What the exporter and sampler are built from, after the standard OTEL_* variables filled the gaps. */
export interface ResolvedTracing {
  /** Full traces URL, or undefined: the exporter then reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT itself. */
  url: string | undefined;
  protocol: 'http/protobuf' | 'http/json';
  sampleRatio: number;
  /**
   * Whether a caller's sampled flag decides for the traces it continues (the ratio only for new ones):
   * the config file's sampleRatio and the parentbased_ samplers; OTEL_TRACES_SAMPLER=always_on,
   * always_off or traceidratio decide every trace alone, as the specification defines them.
   */
  parentBased: boolean;
  /** undefined: OTEL_SERVICE_NAME, else "switchboard". */
  serviceName: string | undefined;
  headers: Record<string, string>;
  recordPrincipal: boolean;
  /** A client's trace context only linked: the gateway's spans start traces of their own (tracing.callerContext: link). */
  linkCallers: boolean;
  /** The batch span processor's settings from OTEL_BSP_* (absent: the SDK's defaults). */
  batch: BatchSettings;
  /** Span limits from OTEL_SPAN_* and OTEL_ATTRIBUTE_* (absent: the SDK's defaults; attribute values cut at DEFAULT_ATTRIBUTE_VALUE_LENGTH). */
  limits: SpanLimitSettings;
  /** What in the environment was not usable (said once in the log at start). */
  notes: string[];
}

export interface BatchSettings {
  scheduledDelayMillis?: number;
  exportTimeoutMillis?: number;
  maxQueueSize?: number;
  maxExportBatchSize?: number;
}

export interface SpanLimitSettings {
  attributeCountLimit?: number;
  attributeValueLengthLimit?: number;
  eventCountLimit?: number;
  linkCountLimit?: number;
  attributePerEventCountLimit?: number;
  attributePerLinkCountLimit?: number;
}

const PROTOCOLS = new Set(['http/protobuf', 'http/json']);

/** The samplers that decide alone: what a caller's sampled flag says does not count. */
const ALONE: ReadonlySet<string> = new Set(['always_on', 'always_off', 'traceidratio']);
const KNOWN_SAMPLERS: ReadonlySet<string> = new Set([...ALONE, ...[...ALONE].map((s) => `parentbased_${s}`)]);

/**
 * OTEL_TRACES_SAMPLER (+ _ARG) as a ratio: always_on, always_off, traceidratio and their parentbased_
 * forms; only those follow a caller's sampled flag (an operator's always_off is not turned on by a client).
 */
function envSampler(env: NodeJS.ProcessEnv, notes: string[]): { ratio: number | undefined; parentBased: boolean } {
  let sampler = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || undefined;
  // One not supported here (jaeger_remote, xray): said, and the default used, parentbased_always_on.
  if (sampler !== undefined && !KNOWN_SAMPLERS.has(sampler)) {
    notes.push(`OTEL_TRACES_SAMPLER=${JSON.stringify(env.OTEL_TRACES_SAMPLER)} is not supported (always_on, always_off, traceidratio and their parentbased_ forms); using parentbased_always_on`);
    sampler = undefined;
  }
  // Unset: the default, parentbased_always_on (its ratio from _ARG, as before).
  const parentBased = sampler === undefined || !ALONE.has(sampler);
  if (sampler === 'always_on' || sampler === 'parentbased_always_on') return { ratio: 1, parentBased };
  if (sampler === 'always_off' || sampler === 'parentbased_always_off') return { ratio: 0, parentBased };
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  if (arg === undefined || arg.trim() === '') return { ratio: undefined, parentBased };
  const n = Number(arg);
  if (Number.isFinite(n) && n >= 0 && n <= 1) return { ratio: n, parentBased };
  notes.push(`OTEL_TRACES_SAMPLER_ARG=${JSON.stringify(arg)} is not a ratio between 0 and 1; ignored`);
  return { ratio: undefined, parentBased };
}

/** The SDK's batch defaults (BatchSpanProcessorBase), which a batch or queue variable is weighed against. */
const DEFAULT_QUEUE = 2048;
const DEFAULT_BATCH = 512;
/**
 * The largest value taken: the spec asks for 0 to 2^31 - 1, the longest a Node timer waits (a longer
 * export timeout would fail every export, a longer schedule delay export every millisecond). The same
 * figure as the peer's MAX_TIMER_MS, written again: observability imports no other layer.
 */
const MAX_INTEGER = 2 ** 31 - 1;
/** Attribute values are cut to this many characters unless an OTEL_* variable says otherwise. */
export const DEFAULT_ATTRIBUTE_VALUE_LENGTH = 4096;

/**
 * The standard variables of the batch span processor and of span limits. The SDK's trace package reads
 * none of them itself (only its Node "all in one" package does, which the gateway does not load), so
 * they are read here: each a whole number, else said in the log and treated as not set.
 */
const BATCH_VARIABLES: ReadonlyArray<[keyof BatchSettings, string, number]> = [
  ['scheduledDelayMillis', 'OTEL_BSP_SCHEDULE_DELAY', 0],
  // A timeout of 0 means none (the spec's rule for timeouts): the longest a timer can wait.
  ['exportTimeoutMillis', 'OTEL_BSP_EXPORT_TIMEOUT', 0],
  ['maxQueueSize', 'OTEL_BSP_MAX_QUEUE_SIZE', 1],
  ['maxExportBatchSize', 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 1],
];
/**
 * Each limit by its own variable, then the general one (OTEL_ATTRIBUTE_*), which the spec applies to
 * every record with attributes: spans, their events and their links.
 */
const LIMIT_VARIABLES: ReadonlyArray<[keyof SpanLimitSettings, string[]]> = [
  ['attributeCountLimit', ['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT']],
  ['attributeValueLengthLimit', ['OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT']],
  ['eventCountLimit', ['OTEL_SPAN_EVENT_COUNT_LIMIT']],
  ['linkCountLimit', ['OTEL_SPAN_LINK_COUNT_LIMIT']],
  ['attributePerEventCountLimit', ['OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT']],
  ['attributePerLinkCountLimit', ['OTEL_LINK_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT']],
];

/**
 * A variable's whole number (digits only: the spec's Integer), at least `min`, at most MAX_INTEGER
 * (larger is said and clamped); undefined when unset, or (with a note) when it is anything else.
 */
function envInteger(env: NodeJS.ProcessEnv, name: string, min: number, notes: string[], why = `a whole number of at least ${min}`): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min)) {
    notes.push(`${name}=${JSON.stringify(env[name])} is not ${why}; treated as not set`);
    return undefined;
  }
  if (n > MAX_INTEGER) {
    notes.push(`${name}=${raw} is above ${MAX_INTEGER}; ${MAX_INTEGER} is used`);
    return MAX_INTEGER;
  }
  return n;
}

function envBatch(env: NodeJS.ProcessEnv, notes: string[]): BatchSettings {
  const out: BatchSettings = {};
  for (const [key, name, min] of BATCH_VARIABLES) {
    const n = envInteger(env, name, min, notes);
    if (n !== undefined) out[key] = key === 'exportTimeoutMillis' && n === 0 ? MAX_INTEGER : n;
  }
  // The SDK would shrink a batch larger than its queue itself, silently (no diag logger here): said here.
  const queue = out.maxQueueSize ?? DEFAULT_QUEUE;
  const batch = out.maxExportBatchSize ?? DEFAULT_BATCH;
  if (batch > queue) {
    notes.push(`the export batch (${batch}${out.maxExportBatchSize === undefined ? ', the default' : ''}) is larger than the queue (${queue}): batches are the queue's size`);
    out.maxExportBatchSize = queue;
  }
  return out;
}

function envLimits(env: NodeJS.ProcessEnv, notes: string[]): SpanLimitSettings {
  const out: SpanLimitSettings = {};
  // Each variable read once: the general attribute count stands for three limits.
  const read = new Map<string, number | undefined>();
  for (const [key, names] of LIMIT_VARIABLES) {
    for (const name of names) {
      // The spec allows a length limit of 0, but the SDK reads a limit below 1 as none at all (values
      // would go out whole, the opposite of what was asked): at least 1. A count of 0 keeps none.
      if (!read.has(name)) read.set(name, key === 'attributeValueLengthLimit' ? envInteger(env, name, 1, notes, 'a length of at least 1 (the SDK cannot cut values to nothing)') : envInteger(env, name, 0, notes));
      const n = read.get(name);
      if (n === undefined) continue;
      out[key] = n;
      break;
    }
  }
  return out;
}

/**
 * The endpoint's path + /v1/traces. Its query (a collector's key) stays the query: appended to as text,
 * the path went into the query (`/?key=abc/v1/traces`). The schema has checked it is a URL.
 */
function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.href;
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
  const batch = envBatch(env, notes);
  const limits = envLimits(env, notes);
  // The file's sampleRatio wins over the variables, and follows a caller's flag (README "Tracing").
  const sampler = o.sampleRatio === undefined ? envSampler(env, notes) : { ratio: o.sampleRatio, parentBased: true };
  // Unset, the SDK keeps values whole: a resource URI (the client's) could make a span as large as its
  // request. OTEL_(SPAN_)ATTRIBUTE_VALUE_LENGTH_LIMIT still decides where it is set.
  limits.attributeValueLengthLimit ??= DEFAULT_ATTRIBUTE_VALUE_LENGTH;
  return {
    url: o.endpoint === undefined ? undefined : tracesUrl(o.endpoint),
    protocol: protocol ?? 'http/protobuf',
    sampleRatio: sampler.ratio ?? 1,
    parentBased: sampler.parentBased,
    serviceName: o.serviceName,
    headers: { ...o.headers },
    recordPrincipal: o.recordPrincipal,
    linkCallers: o.callerContext === 'link',
    batch,
    limits,
    notes,
  };
}

/** OTEL_SDK_DISABLED=true turns tracing off whatever the config says (the SDK's own switch). */
export function sdkDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
}
