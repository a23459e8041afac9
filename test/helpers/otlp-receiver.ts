import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeTraceRequest } from './otlp-protobuf.js';
import { waitFor } from './wait.js';

/** A span as a collector received it, either encoding decoded to the same shape. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  links: Array<{ traceId: string; spanId: string }>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string | undefined };
}

type JsonValue = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
type JsonKv = { key: string; value: JsonValue };

function jsonValue(v: JsonValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.doubleValue;
}

const jsonAttributes = (kvs: JsonKv[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

/** Every span of an OTLP/JSON ExportTraceServiceRequest (ids are hex strings in OTLP/JSON). */
function decodeJson(body: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = String(jsonAttributes(rs.resource?.attributes)['service.name']);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          service,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          kind: Number(s.kind),
          attributes: jsonAttributes(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: jsonAttributes(e.attributes) })),
          links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
          status: { code: Number(s.status?.code ?? 0), message: s.status?.message || undefined },
        });
      }
    }
  }
  return out;
}

/**
 * An OTLP/HTTP trace receiver on a loopback port, as a collector is one: POST /v1/traces, JSON or
 * protobuf, answered 200. It keeps every span and the content type each export came with.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = String(req.headers['content-type'] ?? '');
      const body = Buffer.concat(chunks);
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      contentTypes.push(type);
      spans.push(...(type.includes('protobuf') ? decodeTraceRequest(body) : decodeJson(JSON.parse(body.toString('utf8')))));
      res.writeHead(200, { 'content-type': type.includes('protobuf') ? 'application/x-protobuf' : 'application/json' }).end(type.includes('protobuf') ? '' : '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    /** The spans of one trace, once `ready` says they are all there. */
    async trace(traceId: string, ready: (spans: ReceivedSpan[]) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
      const of = () => spans.filter((s) => s.traceId === traceId);
      await waitFor(() => ready(of()), { timeoutMs });
      return of();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
