/**
 * Just enough of the protobuf wire format to read an OTLP ExportTraceServiceRequest (field numbers of
 * opentelemetry/proto/trace/v1/trace.proto), so the tests decode what the http/protobuf exporter
 * really sends without a protobuf dependency. Test code: not part of the gateway.
 */
import type { ReceivedSpan } from './otlp-receiver.js';

type Field = { no: number; wire: number; bytes: Buffer; varint: bigint };

function varint(buf: Buffer, at: number): [bigint, number] {
  let v = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[at++]!;
    v |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) return [v, at];
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < buf.length) {
    const [key, next] = varint(buf, at);
    at = next;
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [v, n] = varint(buf, at);
      out.push({ no, wire, bytes: Buffer.alloc(0), varint: v });
      at = n;
    } else if (wire === 2) {
      const [len, n] = varint(buf, at);
      out.push({ no, wire, bytes: buf.subarray(n, n + Number(len)), varint: 0n });
      at = n + Number(len);
    } else {
      const size = wire === 1 ? 8 : 4;
      out.push({ no, wire, bytes: buf.subarray(at, at + size), varint: 0n });
      at += size;
    }
  }
  return out;
}

const all = (fs: Field[], no: number) => fs.filter((f) => f.no === no);
const one = (fs: Field[], no: number) => fs.find((f) => f.no === no);

function anyValue(buf: Buffer): unknown {
  const f = fields(buf)[0];
  if (!f) return undefined;
  if (f.no === 1) return f.bytes.toString('utf8');
  if (f.no === 2) return f.varint !== 0n;
  if (f.no === 3) return Number(BigInt.asIntN(64, f.varint));
  if (f.no === 4) return f.bytes.readDoubleLE(0);
  return f.bytes.toString('hex');
}

function attributes(fs: Field[], no: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of all(fs, no)) {
    const k = fields(kv.bytes);
    out[one(k, 1)!.bytes.toString('utf8')] = anyValue(one(k, 2)?.bytes ?? Buffer.alloc(0));
  }
  return out;
}

function span(buf: Buffer, service: string): ReceivedSpan {
  const f = fields(buf);
  const status = fields(one(f, 15)?.bytes ?? Buffer.alloc(0));
  const parent = one(f, 4)?.bytes.toString('hex');
  return {
    service,
    traceId: one(f, 1)!.bytes.toString('hex'),
    spanId: one(f, 2)!.bytes.toString('hex'),
    parentSpanId: parent ? parent : undefined,
    name: one(f, 5)!.bytes.toString('utf8'),
    kind: Number(one(f, 6)?.varint ?? 0n),
    attributes: attributes(f, 9),
    events: all(f, 11).map((e) => {
      const ef = fields(e.bytes);
      return { name: one(ef, 2)!.bytes.toString('utf8'), attributes: attributes(ef, 3) };
    }),
    links: all(f, 13).map((l) => {
      const lf = fields(l.bytes);
      return { traceId: one(lf, 1)!.bytes.toString('hex'), spanId: one(lf, 2)!.bytes.toString('hex') };
    }),
    status: { code: Number(one(status, 3)?.varint ?? 0n), message: one(status, 2)?.bytes.toString('utf8') },
  };
}

/** Every span of a protobuf ExportTraceServiceRequest, with its resource's service.name. */
export function decodeTraceRequest(buf: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of all(fields(buf), 1)) {
    const r = fields(rs.bytes);
    const service = String(attributes(fields(one(r, 1)?.bytes ?? Buffer.alloc(0)), 1)['service.name']);
    for (const ss of all(r, 2)) for (const s of all(fields(ss.bytes), 2)) out.push(span(s.bytes, service));
  }
  return out;
}
