// `node --import <this>`: holds the load of the gateway's app module (src/app.ts, dist/app.js) until the
// file $SWB_GATE_DIR/open exists, after writing $SWB_GATE_DIR/waiting. A test can then act (send a signal)
// at a known point of start-up, while the module graph loads, as an operator may at any moment.
import { existsSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) register(import.meta.url);

export async function load(url, context, nextLoad) {
  const dir = process.env.SWB_GATE_DIR;
  if (dir && /\/(src\/app\.ts|dist\/app\.js)$/.test(new URL(url).pathname)) {
    writeFileSync(join(dir, 'waiting'), '');
    // Bounded: 60 s at most, then the load goes on.
    for (let i = 0; i < 1200 && !existsSync(join(dir, 'open')); i++) await sleep(50);
  }
  return nextLoad(url, context);
}
