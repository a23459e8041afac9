// `node --import <this>`: holds the gateway's start-up at the top of its app module (src/app.ts,
// dist/app.js) until the file $SWB_GATE_DIR/open exists, after writing $SWB_GATE_DIR/waiting. A test can
// then act (send a signal) at a known point of start-up, while the module graph loads, as an operator may
// at any moment. The hold is a top-level await put before the module's own code, so the main thread
// keeps running its event loop (and so its signal handlers) while it waits: a loader hook that waited
// itself would block the main thread on Node 22, where module loading waits for the hooks' thread.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) register(import.meta.url);

const hold = (dir) => `await (async () => {
  const { existsSync, writeFileSync } = await import('node:fs');
  writeFileSync(${JSON.stringify(`${dir}/waiting`)}, '');
  // Bounded: 60 s at most, then start-up goes on.
  for (let i = 0; i < 1200 && !existsSync(${JSON.stringify(`${dir}/open`)}); i++) await new Promise((r) => setTimeout(r, 50));
  // A signal the test sent before opening was delivered before this process saw the file (it runs its
  // signal handler first when next scheduled) and is waiting in libuv's signal pipe: one poll phase
  // (setImmediate runs after it) hands it to the JavaScript handlers before start-up goes on.
  await new Promise((r) => setImmediate(r));
})();
`;

export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  const dir = process.env.SWB_GATE_DIR;
  if (!dir || !/\/(src\/app\.ts|dist\/app\.js)$/.test(new URL(url).pathname)) return loaded;
  const source = typeof loaded.source === 'string' ? loaded.source : Buffer.from(loaded.source).toString('utf8');
  return { ...loaded, source: hold(dir) + source };
}
