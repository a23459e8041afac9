// A raw TCP connection for listener tests (connection caps, deadlines): what the peer sent and whether it
// closed, with a reset at accept (what a cap looks like from the client's side) taken as a close.
import { connect, type Socket } from 'node:net';

export interface RawConnection {
  socket: Socket;
  received: () => string;
  closed: () => boolean;
}

/** Connects to host:port; rejects only when the connection cannot be made at all (refused, unreachable). */
export function openRawSocket(host: string, port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let text = '';
    let closed = false;
    socket.on('data', (b) => (text += b.toString()));
    socket.on('error', () => {}); // a reset at accept is what the cap looks like from here
    socket.on('close', () => (closed = true));
    socket.once('connect', () => resolve({ socket, received: () => text, closed: () => closed }));
    socket.once('error', reject);
  });
}
