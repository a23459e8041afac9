// Server-Sent Events read with fetch: EventSource cannot send an Authorization header, and a token in
// the URL would end up in logs and history. Reconnects with backoff; a 401/403 (or a "denied" event,
// when the token expires) stops it and says why.

export function openStream(url, headers, { onEvent, onState }) {
  const abort = new AbortController();
  let closed = false;
  let delay = 1000;
  const stop = (message) => {
    closed = true;
    abort.abort();
    onState('denied', message);
  };
  (async () => {
    while (!closed) {
      try {
        onState('connecting');
        const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers() }, signal: abort.signal, cache: 'no-store' });
        if (res.status === 401 || res.status === 403) {
          const body = await res.json().catch(() => ({}));
          return stop(body?.error?.message ?? `refused (${res.status})`);
        }
        if (!res.ok || !res.body) throw new Error(`the gateway answered ${res.status}`);
        delay = 1000;
        await read(res.body, (event, data) => (event === 'denied' ? stop(data.message) : onEvent(event, data)));
        throw new Error('the stream ended');
      } catch (err) {
        if (closed) return;
        onState('retrying', err.message);
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 15000);
      }
    }
  })();
  return { close: () => ((closed = true), abort.abort()) };
}

async function read(body, emit) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) emit(event, JSON.parse(data.join('\n')));
    }
  }
}
