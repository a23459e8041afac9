import type { Logger } from '../observability/logger.js';

/**
 * The most of an upstream's `instructions` passed on, in UTF-8 bytes, the marker included. Clients are
 * given every upstream's at initialize (server/discover), and a host puts them in its model's system
 * prompt: only the message bound (16 MiB) held them, so one upstream could fill every session's context.
 */
export const MAX_INSTRUCTIONS_BYTES = 16 * 1024;

/** What ends instructions that were cut: the reader (a person, a model) sees that more was said. */
export const INSTRUCTIONS_CUT = `\n\n[instructions cut by the gateway at ${MAX_INSTRUCTIONS_BYTES / 1024} KiB]`;

const encoder = new TextEncoder();
const ROOM = MAX_INSTRUCTIONS_BYTES - encoder.encode(INSTRUCTIONS_CUT).length;

/**
 * An upstream's instructions as they are passed on: as they are when they fit, else cut on a character
 * boundary (encodeInto writes no part of a character, a surrogate pair whole or not at all) and marked,
 * with one warning line (once per start: instructions come once, at initialize or server/discover).
 */
export function cappedInstructions(text: string, logger: Logger): string {
  // Fewer UTF-16 units than a third of the room: at most three bytes each, it fits (no encoding needed).
  if (text.length * 3 <= MAX_INSTRUCTIONS_BYTES) return text;
  if (encoder.encodeInto(text, new Uint8Array(MAX_INSTRUCTIONS_BYTES)).read === text.length) return text;
  const kept = encoder.encodeInto(text, new Uint8Array(ROOM)).read;
  logger.warn({ bytes: Buffer.byteLength(text), limit: MAX_INSTRUCTIONS_BYTES }, `upstream instructions longer than ${MAX_INSTRUCTIONS_BYTES} bytes: cut, and marked so, for every client`);
  return text.slice(0, kept) + INSTRUCTIONS_CUT;
}
