import { request, type Dispatcher } from 'undici';
import { GatewayError } from '../errors.js';

/**
 * A body longer than this may be cut off by its server before all of it is sent: more than a loopback
 * connection's buffers take at once, and than the smallest limit servers commonly set (Express's json(),
 * 100 KiB). A reset with less than this on the wire is the server's or the network's failure.
 */
const CUT_OFF_BODY_CHARS = 64 * 1024;

/** How a connection reset reaches undici's caller: the socket's own error, or undici's for a closed one. */
const RESET_CODES: ReadonlySet<unknown> = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * A request whose connection was reset while a long body went out. A server refusing a body as too large
 * (413; the official SDK's legacy server, 400 "request entity too large") stops reading it and closes; the
 * rest of the body, still arriving, makes its side reset the connection, and the refusal, sent first, is then
 * lost before it is read (about 1 call in 60 on loopback under load, in CI). It failed as "could not be
 * reached", counted by the circuit: a few such calls of one client paused the upstream for every other client.
 * It is the arguments' fault here, as for the refusal read (see bodyTooLarge): the circuit does not count it.
 * A partial JSON body never runs, so nothing was done. Any other failure, or a short body: as it is.
 */
function bodyCutOff(upstream: string, err: unknown, body: string | undefined): unknown {
  if (body === undefined || body.length <= CUT_OFF_BODY_CHARS || !RESET_CODES.has((err as { code?: unknown } | null)?.code)) return err;
  const size = `${(Buffer.byteLength(body) / 1_048_576).toFixed(1)} MiB`;
  return new GatewayError('SWB_ARGUMENT_REFUSED', `upstream "${upstream}" reset the connection while a request of ${size} was being sent, before answering: most likely too large for its server (its arguments are more than it takes)`, { upstream });
}

/** One HTTP request to an upstream (undici's request), its body's cut-off told apart (see bodyCutOff). */
export async function upstreamRequest(upstream: string, url: string, options: { body?: string; dispatcher: Dispatcher } & Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'body'>): Promise<Dispatcher.ResponseData> {
  try {
    return await request(url, options);
  } catch (err) {
    throw bodyCutOff(upstream, err, options.body);
  }
}
