/** How long a notifications/cancelled may take before the stream of the request it names is let go anyway. */
const CANCEL_GRACE_MS = 1000;

/**
 * The caller gave up on a 2025-era request (cancelled, timed out) over Streamable HTTP: the notification
 * goes first (`sent`, its POST), then the request's POST (`stream`) is let go. The upstream answers nothing
 * more on that stream, and the SDK's never ends it: kept, each would hold one of the agent's connections
 * for the session's life. Bounded: with every connection held by such streams, the notification gets one
 * only once this one goes.
 */
export async function cancelThenLetGo(sent: Promise<unknown>, stream: AbortController): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([sent.catch(() => {}), new Promise((r) => (timer = setTimeout(r, CANCEL_GRACE_MS)))]);
  clearTimeout(timer);
  stream.abort();
  await sent;
}
