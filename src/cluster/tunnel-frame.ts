import { parseChannelObject } from './channel-message.js';

/** A request as it crosses to the replica that owns its session. */
export interface TunnelRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * One message on a replica's inbox: a request, its cancellation, or a piece of its answer. The pieces of
 * an answer are numbered from 0 (`n`), so one Redis delivers again is known (absent from versions before 2026-12-07).
 */
export type Frame =
  | { t: 'req'; id: string; from: string; req: TunnelRequest }
  | { t: 'abort'; id: string }
  | { t: 'head'; id: string; n?: number; status: number; headers: Record<string, string | string[]> }
  | { t: 'data'; id: string; n?: number; chunk: string }
  | { t: 'end'; id: string; n?: number };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isStringMap = (v: unknown, values: (x: unknown) => boolean): boolean => isObject(v) && Object.values(v).every(values);

function isRequest(v: unknown): v is TunnelRequest {
  return isObject(v) && isString(v.method) && isString(v.url) && isStringMap(v.headers, isString) && (v.body === undefined || isString(v.body));
}

/** A frame read from the inbox, or undefined when the text is not one (see parseChannelObject). */
export function parseFrame(text: string): Frame | undefined {
  const v = parseChannelObject(text);
  if (!v || !isString(v.id) || (v.n !== undefined && !Number.isSafeInteger(v.n))) return undefined;
  switch (v.t) {
    case 'req':
      return isString(v.from) && isRequest(v.req) ? (v as Frame) : undefined;
    case 'abort':
    case 'end':
      return v as Frame;
    case 'head':
      return Number.isInteger(v.status) && isStringMap(v.headers, (h) => isString(h) || (Array.isArray(h) && h.every(isString))) ? (v as Frame) : undefined;
    case 'data':
      return isString(v.chunk) ? (v as Frame) : undefined;
    default:
      return undefined;
  }
}

/** A response's headers without those that describe its framing on the other hop. */
export function withoutFraming(h: Record<string, string | string[]>): Record<string, string | string[]> {
  const headers = { ...h };
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  delete headers.connection;
  return headers;
}
