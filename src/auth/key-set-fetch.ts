import { errors, type FetchImplementation } from 'jose';

/**
 * The most of a key set answer that is read (a real set is a few kB). The read had a time limit only
 * (jwksTimeoutMs): a URL that answered without end was buffered whole, hundreds of MB within the timeout.
 */
export const KEY_SET_MAX_BYTES = 1024 * 1024;

/** Where a failed fetch is told (once per fetch, so at most once per cooldown). Never the URL: it can carry credentials. */
export interface KeySetFetchLog {
  warn(obj: object, msg: string): void;
  /** The keys of each set fetched (at most once per cooldown, never per request): whose they are is looked at there (DevKeyWatch). */
  keySet?(keys: readonly object[]): void;
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

/**
 * The errors a key set fetch threw (connection refused, DNS, a body cut off), as they came: plain Errors,
 * told apart from any other plain Error on the way to a key (WebCrypto refusing to import one of the set's
 * keys, jose refusing an RSA key under 2048 bits), which is no fetch's failure (isKeySetFetchFailure).
 */
const FETCH_FAILURES = new WeakSet<object>();

function fetchFailure(err: unknown): unknown {
  if (err !== null && typeof err === 'object') FETCH_FAILURES.add(err);
  return err;
}

/** Whether `err` is one a key set fetch threw (the issuer out of reach), not one of a key's own. */
export function isKeySetFetchFailure(err: unknown): boolean {
  return err !== null && typeof err === 'object' && FETCH_FAILURES.has(err);
}

const isObject = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The keys of a body that jose can take as a key set: JSON with a "keys" array of objects; else undefined.
 * One whose array holds anything else jose refuses (JWKSInvalid) without counting a fetch: taken as good
 * here, it was fetched again by every request.
 */
function keySetKeys(text: string): object[] | undefined {
  try {
    const doc = JSON.parse(text) as unknown;
    const keys = isObject(doc) ? (doc as { keys?: unknown }).keys : undefined;
    return Array.isArray(keys) && keys.every(isObject) ? (keys as object[]) : undefined;
  } catch {
    return undefined;
  }
}

/** What the log says of a failed fetch: the HTTP status or the system error code, never a message (it can quote the URL). */
function failureOf(err: unknown): { what: string; fields: object } {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return { what: 'it timed out (auth.jwksTimeoutMs)', fields: {} };
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? { what: `it failed: ${code}`, fields: { code } } : { what: 'it failed', fields: {} };
}

/**
 * The fetch behind the issuer's remote key set (jose's customFetch). jose's cooldown counts from the last
 * fetch that succeeded, so while the key set failed to load (the issuer answering 5xx or an HTML page,
 * timing out, a wrong URL) every token naming an unknown kid, and before the first success every token
 * at all, fetched it again: any client, with no valid token, could make the gateway hit the issuer once per
 * request. After a failed fetch this one goes out again only once `cooldownMs` has passed; until then it
 * fails at once (the client is answered 503 with Retry-After, as for the failed fetch). Each failed fetch
 * is a warn line saying why (an operator saw only jwks_unavailable per refused request).
 */
export function cooledKeySetFetch(cooldownMs: number, log?: KeySetFetchLog, fetchImpl: FetchImplementation = fetch, maxBytes = KEY_SET_MAX_BYTES): FetchImplementation {
  let failedAt = -Infinity;
  const failed = (what: string, fields: object = {}): void => {
    failedAt = performance.now();
    log?.warn({ ...fields, cooldownMs }, `auth.jwksUrl: the key set fetch failed: ${what}; tried again after auth.jwksCooldownMs`);
  };
  return async (url, options) => {
    if (performance.now() - failedAt < cooldownMs) {
      throw new errors.JOSEError('the JSON Web Key Set is not fetched again yet: its last fetch failed less than auth.jwksCooldownMs ago');
    }
    let res: Response;
    try {
      res = await fetchImpl(url, options);
    } catch (err) {
      const { what, fields } = failureOf(err);
      failed(what, fields);
      throw fetchFailure(err);
    }
    if (res.status !== 200) {
      const redirect = res.status >= 300 && res.status < 400 ? ' (a redirect, which is not followed: set auth.jwksUrl to the URL it names)' : '';
      failed(`answered HTTP ${res.status}${redirect}`, { status: res.status });
      // jose reads only the status of such an answer: its body, left unread, held the connection until collected.
      await res.body?.cancel().catch(() => {});
      return new Response(null, { status: res.status, headers: res.headers });
    }
    return checkedBody(res, maxBytes, failed, log);
  };
}

/** The answer as jose will read it, its body read within `maxBytes`; `failed` told when it is no key set, `log.keySet` its keys when it is one. */
async function checkedBody(res: Response, maxBytes: number, failed: (what: string, fields?: object) => void, log?: KeySetFetchLog): Promise<Response> {
  let text: string | undefined;
  try {
    text = await boundedText(res, maxBytes);
  } catch (err) {
    failed(`its answer could not be read: ${failureOf(err).what}`);
    throw fetchFailure(err);
  }
  if (text === undefined) {
    const msg = `the JSON Web Key Set HTTP response is larger than ${maxBytes} bytes`;
    failed(msg, { maxBytes });
    throw new errors.JOSEError(msg);
  }
  const keys = keySetKeys(text);
  if (keys === undefined) failed('its answer is not a JSON Web Key Set (JSON with a "keys" array of keys)', { contentType: res.headers.get('content-type')?.slice(0, 64) });
  else log?.keySet?.(keys);
  return new Response(text, { status: 200, headers: res.headers });
}
