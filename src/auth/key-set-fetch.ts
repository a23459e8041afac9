import { errors, type FetchImplementation } from 'jose';

/**
 * The most of a key set answer that is read (a real set is a few kB). The read had a time limit only
 * (jwksTimeoutMs): a URL that answered without end was buffered whole, hundreds of MB within the timeout.
 */
export const KEY_SET_MAX_BYTES = 1024 * 1024;

/** Where a failed fetch is told (once per fetch, so at most once per cooldown). Never the URL: it can carry credentials. */
export interface KeySetFetchLog {
  warn(obj: object, msg: string): void;
}

/** The body as text, or undefined (the rest left unread, the connection dropped) once it passes `maxBytes`. */
async function boundedText(res: Response, maxBytes: number): Promise<string | undefined> {
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
    await res.body?.cancel().catch(() => {});
    return undefined;
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const isObject = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A body that jose can take as a key set: JSON with a "keys" array of objects. One whose array holds
 * anything else jose refuses (JWKSInvalid) without counting a fetch: taken as good here, it was fetched
 * again by every request.
 */
function isKeySet(text: string): boolean {
  try {
    const doc = JSON.parse(text) as unknown;
    const keys = isObject(doc) ? (doc as { keys?: unknown }).keys : undefined;
    return Array.isArray(keys) && keys.every(isObject);
  } catch {
    return false;
  }
}

/**
 * The fetch behind the issuer's remote key set (jose's customFetch). jose's cooldown counts from the last
 * fetch that succeeded, so while the key set failed to load (the issuer answering 5xx or an HTML page,
 * timing out, a wrong URL) every token naming an unknown kid, and before the first success every token
 * at all, fetched it again: any client, with no valid token, could make the gateway hit the issuer once per
 * request. After a failed fetch this one goes out again only once `cooldownMs` has passed; until then it
 * fails at once (the client is answered 503 with Retry-After, as for the failed fetch).
 */
export function cooledKeySetFetch(cooldownMs: number, log?: KeySetFetchLog, fetchImpl: FetchImplementation = fetch, maxBytes = KEY_SET_MAX_BYTES): FetchImplementation {
  let failedAt = -Infinity;
  const failed = (): void => void (failedAt = performance.now());
  return async (url, options) => {
    if (performance.now() - failedAt < cooldownMs) {
      throw new errors.JOSEError('the JSON Web Key Set is not fetched again yet: its last fetch failed less than auth.jwksCooldownMs ago');
    }
    try {
      const res = await fetchImpl(url, options);
      if (res.status !== 200) {
        failed();
        return res;
      }
      const text = await boundedText(res, maxBytes);
      if (text === undefined) {
        failed();
        const msg = `the JSON Web Key Set HTTP response is larger than ${maxBytes} bytes`;
        log?.warn({ maxBytes, cooldownMs }, `auth.jwksUrl: ${msg}; the fetch counts as failed, tried again after auth.jwksCooldownMs`);
        throw new errors.JOSEError(msg);
      }
      if (!isKeySet(text)) failed();
      return new Response(text, { status: 200, headers: res.headers });
    } catch (err) {
      failed();
      throw err;
    }
  };
}
