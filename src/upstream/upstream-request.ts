import { request, type Dispatcher } from 'undici';
import { boundedInformational } from './informational-answers.js';

/** A body longer than this goes on a connection of its own (see upstreamRequest). */
const OWN_CONNECTION_BODY_CHARS = 64 * 1024;

/**
 * One HTTP request to an upstream (undici's request). A body over 64 KiB asks for a connection of its own
 * (`Connection: close`): a server refusing a long body as too large (413; the official SDK's legacy server, 400
 * "request entity too large") answers before reading it all and then closes that connection. undici, with the
 * whole body already in the socket's buffers, took it as reusable, and the call after it (the next call of
 * anyone, to that upstream) went out on it and failed with ECONNRESET as "could not be reached", counted by
 * the circuit: 4 long calls in 300 on loopback under load, and CI failed on it. A handshake more for a body
 * that long costs little beside it. Informational (1xx) responses are bounded: see boundedInformational.
 */
export function upstreamRequest(url: string, options: { body?: string; dispatcher: Dispatcher } & Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'body'>): Promise<Dispatcher.ResponseData> {
  if (options.body !== undefined && options.body.length > OWN_CONNECTION_BODY_CHARS) options.reset = true;
  options.onInfo = boundedInformational;
  return request(url, options);
}
