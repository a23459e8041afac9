import type { JsonRpcMessage } from '../jsonrpc/types.js';
import { sseEvent } from '../jsonrpc/sse.js';
import type { Transport } from '../transport/transport.js';
import type { SseConnection } from './sse-connection.js';

/**
 * The 2024-11-05 HTTP+SSE side of one client session: one long-lived stream carries every message the
 * gateway sends; the client POSTs to the endpoint URL it was told. The session lives as long as the stream.
 */
export class LegacySseTransport implements Transport {
  readonly #conn: SseConnection;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(conn: SseConnection, endpointUrl: string) {
    this.#conn = conn;
    conn.write(sseEvent(endpointUrl, undefined, 'endpoint'));
    conn.onclose = () => this.onclose?.(); // long-lived: one per legacy session
  }

  async start(): Promise<void> {}

  async send(message: JsonRpcMessage): Promise<void> {
    this.#conn.write(sseEvent(JSON.stringify(message), undefined, 'message'));
  }


  async close(): Promise<void> {
    this.#conn.end();
  }
}
