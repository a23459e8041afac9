/** Server-Sent Events encoding. Data is JSON text, which never contains a raw newline. */
export function sseEvent(data: string, id?: string, event?: string): string {
  let out = '';
  if (event !== undefined) out += `event: ${event}\n`;
  if (id !== undefined) out += `id: ${id}\n`;
  return `${out}data: ${data}\n\n`;
}

/** A priming event (2025-11-25): an id and empty data, so the client can resume from the very start. */
export function ssePriming(id: string, retryMs?: number): string {
  return `${retryMs === undefined ? '' : `retry: ${retryMs}\n`}id: ${id}\ndata: \n\n`;
}

export const SSE_KEEPALIVE = ': keepalive\n\n';
