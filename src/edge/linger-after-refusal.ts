import type { IncomingMessage } from 'node:http';

/** The longest a refused request's connection stays open after its answer, reading what is left of the body. */
const LINGER_MS = 3_000;

/**
 * After an early refusal (the front door's 401, 403, 429) goes out, at once and with `Connection: close`:
 * the rest of the request's body, when it declares no more than `maxBytes` (server.maxBodyBytes, what the
 * gateway reads for any request anyway), is read and dropped for at most LINGER_MS before the connection is
 * closed (a lingering close, RFC 9112 §9.6). Closed at once with the body still coming, the connection met
 * the rest of the upload with a reset: a client that writes its whole body before it reads the answer
 * (Python's http.client, under urllib and requests) got BrokenPipeError for a body of a few MiB, never the
 * 401 whose challenge tells it to renew its token. A body declared larger, or a chunked one past `maxBytes`,
 * is not waited for (it would be refused for its size anyway): the connection is cut as before.
 */
export function lingerAfterRefusal(req: IncomingMessage, maxBytes: number): void {
  const declared = req.headers['content-length'];
  if (req.complete || (declared === undefined && req.headers['transfer-encoding'] === undefined)) return;
  if (!(Number(declared ?? 0) <= maxBytes)) return;
  const socket = req.socket;
  // node:http ends a `Connection: close` response's socket with destroySoon(): FIN, then destroy as soon as
  // the answer is written, so the body still arriving is answered with a reset. This one socket's ends with
  // FIN and then reads on (node's parser drops the body: req is dumped before this runs).
  const linger = (): void => {
    socket.end();
    let seen = 0;
    const stop = (): void => {
      clearTimeout(timer);
      req.off('data', count);
      socket.destroy();
    };
    const count = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > maxBytes) stop();
    };
    const timer = setTimeout(stop, LINGER_MS);
    req.on('data', count).once('end', stop).once('error', stop);
    socket.once('close', () => clearTimeout(timer));
  };
  socket.destroySoon = linger; // an error path's socket, once: the property rule's concern (pretenuring) is moot
}
