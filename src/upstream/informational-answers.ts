/** How many informational (1xx) responses a request to an upstream may get before its answer. */
export const MAX_INFORMATIONAL = 4;

const SEEN = Symbol('informational responses seen');

/**
 * undici's `onInfo` for every request to an upstream or its authorization server: more than MAX_INFORMATIONAL
 * 1xx responses (102 Processing, 103 Early Hints) fail the request. undici starts its headersTimeout again at
 * each one, so an upstream sending them for ever, each within the timeout, held the request, and a connection
 * of the pool, for ever: a notification's send (or a DELETE, or an HTTP+SSE message, which have no deadline of
 * their own), a legacy stream's start, a token request and every call waiting for that token. A request now
 * waits at most MAX_INFORMATIONAL + 1 headersTimeoutMs for its headers. One function for all (no closure per
 * request): undici calls it as a method of the request's handler, on which the count is kept (without one, the
 * first fails); throwing aborts the request with that error.
 */
export function boundedInformational(this: unknown, info: { statusCode: number }): void {
  const handler = typeof this === 'object' && this !== null ? (this as { [SEEN]?: number }) : { [SEEN]: MAX_INFORMATIONAL };
  handler[SEEN] = (handler[SEEN] ?? 0) + 1;
  if (handler[SEEN] > MAX_INFORMATIONAL) throw new Error(`it sent more than ${MAX_INFORMATIONAL} informational responses (the last HTTP ${info.statusCode}) and no answer`);
}
