/** A chunk under this many bytes is small (see keptChunk). */
const SMALL_CHUNK_BYTES = 4096;
/** How many small chunks in a row are copied into one. */
const SMALL_CHUNKS_MERGED = 256;

/**
 * Adds `chunk` to the `chunks` of a message still arriving, `small` the small chunks last in them; returns their
 * count after. Small chunks in a row are copied together, SMALL_CHUNKS_MERGED at a time: each chunk is a Buffer
 * with a backing store of its own, some 200-250 bytes for a byte, and a peer sending a message a byte per write
 * (a remote's body per TCP segment, a stdio server's line per pipe write) had a message's limit (16 MiB) held as
 * a few GB. A message in a few chunks is kept as it came, not copied.
 */
export function keptChunk(chunks: Buffer[], chunk: Buffer, small: number): number {
  chunks.push(chunk);
  if (chunk.length >= SMALL_CHUNK_BYTES) return 0;
  if (++small < SMALL_CHUNKS_MERGED) return small;
  chunks.push(Buffer.concat(chunks.splice(-small)));
  return 0;
}
