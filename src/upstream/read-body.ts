import type { Dispatcher } from 'undici';

/**
 * The first bytes of a body nobody needs in full (an error page, an "Accepted"): at most maxBytes are
 * kept and the rest is discarded unread, so a hostile upstream cannot make the gateway hold a huge body.
 * `idleMs`: for a request made without undici's body timeout (the Streamable HTTP client's, whose SSE
 * bodies idle by design), a body that stalls this long is cut: what arrived is the text, never a hang.
 */
export async function readPrefix(body: Dispatcher.ResponseData['body'], maxBytes = 64 * 1024, idleMs?: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    if (idleMs !== undefined) timer = setTimeout(() => body.destroy(new Error(`no data for ${idleMs} ms`)), idleMs);
  };
  arm();
  try {
    for await (const chunk of body) {
      const c = chunk as Buffer;
      chunks.push(size + c.length > maxBytes ? c.subarray(0, maxBytes - size) : c);
      size += c.length;
      if (size >= maxBytes) {
        body.destroy();
        break;
      }
      arm();
    }
  } catch {
    /* what arrived is enough for an error message */
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A body nobody reads (a 202's, a refusal's, a 401's before its retry), let go: up to 128 KiB is drained
 * so the connection can be reused; a larger one, or one not ended within `ms`, is destroyed. Never
 * throws. Without the bound (these requests have no body timeout: see readPrefix) an upstream that sent
 * its headers and then stalled the body hung the send for ever: a notifications/initialized so answered
 * kept its instance starting for good, and each hung send held a connection.
 */
export async function discard(body: Dispatcher.ResponseData['body'], ms: number): Promise<void> {
  await body.dump({ limit: 128 * 1024, signal: AbortSignal.timeout(ms) }).catch(() => {});
}

/**
 * The stream a notification (or an answer) was accepted with, let go at once: the spec's acceptance is a
 * 202 with no body, and nothing on such a stream is for anyone. Read on (or drained, as `discard` does),
 * one the upstream never ended held a connection for good, and its notification's send with it.
 */
export function letGo(body: Dispatcher.ResponseData['body']): void {
  body.destroy();
}

/** Reads a whole body as text, refusing more than maxBytes and a body that stalls longer than idleMs. */
export async function readBounded(body: Dispatcher.ResponseData['body'], maxBytes: number, idleMs: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => body.destroy(new Error(`no data for ${idleMs} ms`)), idleMs);
  };
  arm();
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        body.destroy();
        throw new Error(`response exceeds ${maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
      arm();
    }
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
