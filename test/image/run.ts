// `npm run image:test`: builds the gateway image with podman and runs it as the chart would.
//  1. podman and mmdebstrap present, and podman able to run a container here; otherwise one SKIP line, exit 0.
//  2. The local Node base (test/image/base.mjs), built once per machine and cached in podman's store.
//  3. `podman build` of the Dockerfile, unchanged but for NODE_IMAGE=<the local base>.
//  4. The image suites (test/image/*.test.ts) with SWB_IMAGE set, then the image's size.
// No container registry is needed: Debian's mirror and npm are.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBase } from './base.mjs';
import { ULIMITS } from './podman.js';

const started = Date.now();
const seconds = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const IMAGE = `localhost/switchboard:${VERSION}`;

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

function skip(why: string): never {
  console.log(`SKIP image:test: ${why}`);
  process.exit(0);
}

/**
 * The CA bundle npm must trust inside the build, when this machine's npm is configured with one (a
 * TLS-inspecting egress proxy): mounted over /usr/local/etc, npm's global config folder, for the build
 * only. A directory that exists in the base, so the mount leaves nothing behind in the image.
 */
function buildCaMount(): string[] {
  const cafile = execFileSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8' }).trim();
  if (!cafile || cafile === 'null' || cafile === 'undefined') return [];
  const dir = mkdtempSync(join('.cache', 'image-build-ca-'));
  writeFileSync(join(dir, 'ca.crt'), readFileSync(cafile));
  writeFileSync(join(dir, 'npmrc'), 'cafile=/usr/local/etc/ca.crt\n');
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return ['--volume', `${join(process.cwd(), dir)}:/usr/local/etc:ro`];
}

if (!has('podman')) skip('podman is not installed (apt-get install podman runc)');
if (!has('mmdebstrap')) skip('mmdebstrap is not installed (apt-get install mmdebstrap), needed for the local Node base');

const { tag: base, built } = ensureBase();
console.log(`base ${base} (${built ? 'built' : 'cached'}) after ${seconds()}`);
const probe = spawnSync('podman', ['run', '--rm', ...ULIMITS, base, 'true'], { encoding: 'utf8' });
if (probe.status !== 0) skip(`podman cannot run a container here: ${(probe.stderr || probe.stdout).trim().split('\n').pop()}`);

// docker format: OCI images drop HEALTHCHECK, which the image declares.
const build = spawnSync(
  'podman',
  ['build', '--isolation', 'chroot', '--format', 'docker', '--build-arg', `NODE_IMAGE=${base}`, ...buildCaMount(), '--tag', IMAGE, '.'],
  { stdio: 'inherit' },
);
if (build.status !== 0) {
  console.error(`image:test: podman build failed (exit ${build.status})`);
  process.exit(1);
}
console.log(`built ${IMAGE} after ${seconds()}`);

const suites = readdirSync('test/image').filter((f) => f.endsWith('.test.ts')).sort().map((f) => join('test/image', f));
const tests = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=300000', ...suites], {
  stdio: 'inherit',
  env: { ...process.env, SWB_IMAGE: IMAGE, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
});
const size = Number(execFileSync('podman', ['image', 'inspect', '--format', '{{.Size}}', IMAGE], { encoding: 'utf8' }).trim());
const baseSize = Number(execFileSync('podman', ['image', 'inspect', '--format', '{{.Size}}', base], { encoding: 'utf8' }).trim());
const mb = (n: number) => `${(n / 1e6).toFixed(0)} MB`;
console.log(`image ${IMAGE}: ${mb(size)} (base ${mb(baseSize)}, gateway layers ${mb(size - baseSize)}); image:test took ${seconds()}`);
process.exit(tests.status ?? 1);
