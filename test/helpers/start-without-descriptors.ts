// Stands in for a gateway out of descriptors: holds every one its limit allows, then starts a stdio
// transport (which has an inherited descriptor to replace) and prints whether the start failed and how
// often it gave back what was reserved for the process (onExit), as a line of JSON.
// Usage: bash -c 'ulimit -n 64; node --import tsx start-without-descriptors.ts'
import { openSync } from 'node:fs';
import { createLogger } from '../../src/observability/logger.js';
import { InheritedDescriptors } from '../../src/sandbox/inherited-descriptors.js';
import { StdioTransport } from '../../src/upstream/stdio-transport.js';

let exits = 0;
const inherited = Object.assign(new InheritedDescriptors(), { current: () => [40] });
const t = new StdioTransport({ command: process.execPath, args: ['-e', ''], env: {}, maxLineBytes: 1 << 20, logger: createLogger('silent'), inherited, onExit: () => exits++ });
const held: number[] = [];
try {
  for (;;) held.push(openSync('/dev/null', 'r'));
} catch {
  // out of descriptors, as meant
}
let failed: string | undefined;
try {
  await t.start();
} catch (err) {
  failed = (err as Error).message;
}
process.stdout.write(`${JSON.stringify({ failed, exits })}\n`);
process.exit(0);
