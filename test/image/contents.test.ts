// What is inside the image: production dependencies and dist/ only, no compiler, no package manager
// caches, nothing left in /tmp by the build, and the OCI labels a registry shows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { HARDENED, IMAGE, podmanOk } from './podman.js';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

/** Runs a shell script in a throwaway container of the image, as root (to see root's home too). */
const inImage = (script: string) => podmanOk(['run', '--rm', ...HARDENED.filter((f) => f !== '--user' && f !== '10001:10001'), '--user', '0', '--entrypoint', 'sh', IMAGE, '-c', script]);

describe(`the contents of ${IMAGE}`, { skip: !IMAGE && 'SWB_IMAGE is not set (run npm run image:test)' }, () => {
  it('has no package manager caches, and nothing in /tmp', async () => {
    const found = await inImage(
      [
        'ls -d /root/.npm /root/.cache /home/switchboard/.npm /home/switchboard/.cache /usr/local/share/.cache 2>/dev/null',
        'find /tmp /var/tmp -mindepth 1 2>/dev/null',
        'find /var/cache/apt /var/lib/apt/lists -type f ! -name lock 2>/dev/null',
        // The build's CA mount (test/image/run.ts) covers this folder: nothing of it may stay behind.
        'find /usr/local/etc -mindepth 1 2>/dev/null',
      ].join('; ') + '; true',
    );
    assert.deepEqual(found.split('\n').filter(Boolean), []);
  });

  it('has no compiler, no TypeScript sources and no development dependencies', async () => {
    const found = await inImage(
      [
        'for t in gcc cc c++ g++ make tsc python3; do command -v $t; done',
        'ls -d /app/src /app/node_modules/typescript /app/node_modules/tsx /app/node_modules/.bin/tsc 2>/dev/null',
        // npm leaves the scope's folder, empty, where a development dependency was.
        'find /app/node_modules/@types -mindepth 1 -maxdepth 1 2>/dev/null',
      ].join('; ') + '; true',
    );
    assert.deepEqual(found.split('\n').filter(Boolean), []);
    assert.match(await inImage('ls /app/dist/main.js /app/node_modules/fastify/package.json'), /main\.js/);
  });

  it("runs Node with AsyncLocalStorage on async context frames (tracing's context without async hooks)", async () => {
    // What the gateway's own check says in the image's environment (NODE_OPTIONS from the Dockerfile).
    const script = "import('/app/dist/observability/async-context-mode.js').then((m) => process.stdout.write(String(m.asyncContextOnHooks())))";
    assert.equal((await inImage(`cd /app && node --input-type=module -e "${script}"`)).trim(), 'false');
  });

  it('carries the OCI labels: source, version (package.json), licence', async () => {
    const labels = JSON.parse(await podmanOk(['image', 'inspect', '--format', '{{json .Labels}}', IMAGE])) as Record<string, string>;
    assert.equal(labels['org.opencontainers.image.version'], VERSION);
    assert.equal(labels['org.opencontainers.image.licenses'], 'Apache-2.0');
    assert.match(labels['org.opencontainers.image.source'] ?? '', /^https:\/\//);
    assert.equal(labels['org.opencontainers.image.title'], 'switchboard');
  });
});
