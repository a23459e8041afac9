import type { Dispatcher } from 'undici';

/**
 * The first bytes of a body nobody needs in full (an error page, an "Accepted"): at most maxBytes are
 * kept and the rest is discarded unread, so a hostile upstream cannot make the gateway hold a huge body.
 */
export async function readPrefix(body: Dispatcher.ResponseData['body'], maxBytes = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const c = chunk as Buffer;
      chunks.push(size + c.length > maxBytes ? c.subarray(0, maxBytes - size) : c);
      size += c.length;
      if (size >= maxBytes) {
        body.destroy();
        break;
      }
    }
  } catch {
    /* what arrived is enough for an error message */
  }
  return Buffer.concat(chunks).toString('utf8');
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
