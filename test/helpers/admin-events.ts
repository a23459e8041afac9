// The admin listener's /events stream read as the web console reads it (fetch with the Authorization
// header: EventSource cannot send one), every event collected in order.
import assert from 'node:assert/strict';

export interface Events {
  /** Every event so far, in order. */
  seen: Array<{ event: string; data: any }>;
  close(): void;
}

/** Reads /events as the console does (fetch, Authorization header), collecting the events. */
export async function events(base: string, token: string | null): Promise<{ status: number; stream: Events | undefined; body: string }> {
  const abort = new AbortController();
  const res = await fetch(new URL('/events', base), { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: abort.signal });
  if (res.status !== 200) return { status: res.status, stream: undefined, body: await res.text() };
  assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const seen: Events['seen'] = [];
  void (async () => {
    let buffer = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) seen.push({ event, data: JSON.parse(data) });
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return { status: 200, stream: { seen, close: () => abort.abort() }, body: '' };
}
