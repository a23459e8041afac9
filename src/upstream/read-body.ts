import type { Dispatcher } from 'undici';
import { keptChunk as kept } from '../jsonrpc/small-chunks.js';
import { answerTooLarge } from './remote-errors.js';

/**
 * The first bytes of a body nobody needs in full (an error page, an "Accepted"): at most maxBytes are
 * kept and the rest is discarded unread, so a hostile upstream cannot make the gateway hold a huge body.
 * `withinMs`: the body is cut that long after the read began, whatever arrived meanwhile: what arrived is
 * the text, never a hang. A bound on the whole read, not on its pauses: a body that trickles a byte now
 * and then (or stalls: these requests have no undici body timeout, their SSE bodies idle by design) held
 * its send, and a connection, for ever.
 */
export async function readPrefix(body: Dispatcher.ResponseData['body'], maxBytes = 64 * 1024, withinMs?: number): Promise<string> {
  return (await collect(body, maxBytes, withinMs)).text;
}

/**
 * A small body needed whole (a token endpoint's answer, an authorization server's metadata), read as
 * readPrefix reads, for at most `withinMs` in all. Not read whole by then, longer than maxBytes, or
 * broken, it throws saying so: what arrived would be misread (cut JSON as "no access_token"). Without the
 * deadline a token endpoint that trickled its body, a byte within each of undici's idle periods, held the
 * token request, and every call waiting for that token, for ever.
 */
export async function readWithin(body: Dispatcher.ResponseData['body'], withinMs: number, maxBytes = 64 * 1024): Promise<string> {
  const { text, error, cut } = await collect(body, maxBytes, withinMs);
  if (error) throw error;
  if (cut) throw new Error(`more than ${maxBytes} bytes, too large for such an answer`);
  return text;
}

/**
 * Up to maxBytes of a body, cut `withinMs` after the read began; `error`: why it ended early (cut, broken);
 * `cut`: there was more than maxBytes (one byte more is read to know it).
 */
async function collect(body: Dispatcher.ResponseData['body'], maxBytes: number, withinMs: number | undefined): Promise<{ text: string; error?: Error; cut?: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let small = 0;
  let error: Error | undefined;
  let cut = false;
  const timer = withinMs === undefined ? undefined : setTimeout(() => body.destroy(new Error(`not read whole within ${withinMs} ms (http.bodyTimeoutMs)`)), withinMs);
  try {
    for await (const chunk of body) {
      const c = chunk as Buffer;
      small = kept(chunks, size + c.length > maxBytes ? c.subarray(0, maxBytes - size) : c, small);
      size += c.length;
      if (size > maxBytes) {
        cut = true;
        body.destroy();
        break;
      }
    }
  } catch (err) {
    // readPrefix: what arrived is enough for an error message; readWithin: the reason it failed.
    error = err as Error;
  } finally {
    clearTimeout(timer);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), error, cut };
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
 * The body a notification (or an answer) was accepted with, let go: the spec's acceptance is a 202 with no
 * body, and nothing in one is for anyone. An SSE stream is closed at once (read on, one the upstream never
 * ended held a connection for good); any other body is drained as `discard` does, so one that trickles
 * for ever holds its send no longer than `ms`.
 */
export async function letGo(body: Dispatcher.ResponseData['body'], contentType: string, ms: number): Promise<void> {
  if (contentType.startsWith('text/event-stream')) body.destroy();
  else await discard(body, ms);
}

/**
 * Reads a whole body as text, refusing more than maxBytes (as `upstream`'s answer too large: see answerTooLarge)
 * and a body that stalls longer than idleMs. For a request's answer only: the request's own timeout bounds the
 * whole read (giving up on it aborts the body); a body no request waits on has no such bound, and goes to letGo
 * instead. Its chunks are kept as `kept` keeps them.
 */
export async function readBounded(body: Dispatcher.ResponseData['body'], maxBytes: number, idleMs: number, upstream: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  let small = 0; // the small chunks last in `chunks`
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
        throw answerTooLarge(upstream, maxBytes);
      }
      small = kept(chunks, chunk as Buffer, small);
      arm();
    }
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
