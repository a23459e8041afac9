/**
 * Sizes of messages as they arrived, kept beside the parsed values: the audit log reports a result's
 * size without serializing it a second time (results can be megabytes).
 */
const sizes = new WeakMap<object, number>();

export function noteWireSize(value: unknown, bytes: number): void {
  if (value !== null && typeof value === 'object') sizes.set(value, bytes);
}

/** The size the value arrived with, or its serialized size when it did not arrive over a wire. */
export function wireSize(value: unknown): number {
  if (value === undefined) return 0;
  if (value !== null && typeof value === 'object') {
    const known = sizes.get(value);
    if (known !== undefined) return known;
  }
  return Buffer.byteLength(JSON.stringify(value));
}
