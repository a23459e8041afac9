import type { JsonRpcMessage } from '../jsonrpc/types.js';
import type { SendOptions, Transport } from './transport.js';

/** Two linked in-memory transports, for tests: what one sends, the other receives (asynchronously, like a wire). */
export class MemoryTransport implements Transport {
  #peer: MemoryTransport | undefined;
  #closed = false;
  readonly sent: Array<{ message: JsonRpcMessage; options: SendOptions | undefined }> = [];
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  static pair(): [MemoryTransport, MemoryTransport] {
    const a = new MemoryTransport();
    const b = new MemoryTransport();
    a.#peer = b;
    b.#peer = a;
    return [a, b];
  }

  async start(): Promise<void> {}

  async send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    if (this.#closed) throw new Error('transport closed');
    this.sent.push({ message, options });
    const peer = this.#peer;
    // structuredClone: the receiver must never share objects with the sender, as on a real wire.
    const copy = structuredClone(message);
    queueMicrotask(() => peer?.onmessage?.(copy));
  }


  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
    const peer = this.#peer;
    if (peer && !peer.#closed) await peer.close();
  }
}
