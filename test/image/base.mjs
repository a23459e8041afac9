#!/usr/bin/env node
// A local stand-in for the official Node image, for machines that reach no container registry (only
// Debian's mirror and npm): Debian bookworm (mmdebstrap --variant=minbase, what bookworm-slim is built
// from) with the Node.js binary of the npm package `node@<version>` and npm in /usr/local, where the
// official image has them. The Node version is the one the Dockerfile's NODE_IMAGE default names, so the
// local base follows the Dockerfile. Imported with `podman import` under a tag keyed by its inputs: it is
// built once per machine (podman's store is the cache, outside any clone) and rebuilt when an input changes.
//   node test/image/base.mjs        prints the tag (localhost/switchboard-node-base:<key>), building it once
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SUITE = 'bookworm';
const MIRRORS = [
  `deb http://deb.debian.org/debian ${SUITE} main`,
  `deb http://deb.debian.org/debian ${SUITE}-updates main`,
  `deb http://deb.debian.org/debian-security ${SUITE}-security main`,
];
// The npm that Node 22.23 bundles (its changelog: "upgrade npm to 10.9.9"); the build stage runs `npm ci` with it.
const NPM_VERSION = '10.9.9';
// What the official image's Debian base configures: apt deletes downloaded .debs and keeps no package
// caches, so `apt-get install` in the Dockerfile leaves the same layers on either base.
const APT_CLEAN = `DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
`;

const SLIM = [
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/locale/*',
  'path-exclude=/usr/share/groff/*',
  'path-exclude=/usr/share/lintian/*',
];

const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });

/** The Node version of the Dockerfile's default NODE_IMAGE (node:22.23.3-bookworm-slim → 22.23.3). */
export function dockerfileNodeVersion(root = ROOT) {
  const m = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-bookworm-slim$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  if (!m) throw new Error('Dockerfile: no "ARG NODE_IMAGE=node:X.Y.Z-bookworm-slim" line to take the Node version from');
  return m[1];
}

/** The tag of the base for these inputs: this file (how it is made), the Node and npm versions, the suite. */
export function baseTag(root = ROOT) {
  const node = dockerfileNodeVersion(root);
  const key = createHash('sha256')
    .update(readFileSync(fileURLToPath(import.meta.url)))
    .update(`${node}\0${NPM_VERSION}\0${SUITE}`)
    .digest('hex')
    .slice(0, 16);
  return { tag: `localhost/switchboard-node-base:${node}-${key}`, node };
}

const exists = (tag) => {
  try {
    run('podman', ['image', 'exists', tag]);
    return true;
  } catch {
    return false;
  }
};

/** /usr/local as the official image has it: bin/node, lib/node_modules/npm, bin/npm and bin/npx. */
function overlay(dir, node) {
  const npmDir = join(dir, 'npm-install');
  console.error(`base: node@${node} and npm@${NPM_VERSION} from npm`);
  run('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', npmDir, `node@${node}`], { stdio: ['ignore', 2, 2] });
  const tarball = run('npm', ['pack', '--silent', '--pack-destination', dir, `npm@${NPM_VERSION}`], { cwd: dir }).trim().split('\n').pop();
  const local = join(dir, 'overlay', 'usr', 'local');
  mkdirSync(join(local, 'bin'), { recursive: true });
  mkdirSync(join(local, 'lib', 'node_modules', 'npm'), { recursive: true });
  cpSync(join(npmDir, 'node_modules', 'node', 'bin', 'node'), join(local, 'bin', 'node'));
  run('tar', ['-xzf', join(dir, tarball), '-C', join(local, 'lib', 'node_modules', 'npm'), '--strip-components=1', '--no-same-owner']);
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin', 'npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin', 'npx'));
  mkdirSync(join(dir, 'overlay', 'etc', 'apt', 'apt.conf.d'), { recursive: true });
  writeFileSync(join(dir, 'overlay', 'etc', 'apt', 'apt.conf.d', 'docker-clean'), APT_CLEAN);
  const got = run(join(local, 'bin', 'node'), ['--version']).trim();
  if (got !== `v${node}`) throw new Error(`expected Node v${node} from the npm package, got ${got}`);
}

/** Builds the base into podman's store under `tag`. */
function build(tag, node) {
  const cacheDir = join(ROOT, '.cache');
  mkdirSync(cacheDir, { recursive: true });
  const dir = mkdtempSync(join(cacheDir, 'image-base-'));
  try {
    overlay(dir, node);
    const tar = join(dir, 'rootfs.tar');
    console.error(`base: mmdebstrap --variant=minbase ${SUITE}`);
    run('mmdebstrap', [
      '--variant=minbase',
      '--quiet',
      // What makes bookworm-slim slim (docs, man pages, translations left out at unpack), kept in the image
      // for later installs as in the official one; copyright files stay.
      ...SLIM.map((rule) => `--dpkgopt=${rule}`),
      `--customize-hook=sync-in ${join(dir, 'overlay')} /`,
      // The Dockerfile runs `apt-get update` itself; the official image ships without lists too.
      '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/*.log "$1"/var/log/apt/*',
      SUITE,
      tar,
      ...MIRRORS,
    ], { stdio: ['ignore', 2, 2] });
    run('podman', [
      'import',
      '--change', 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--change', `ENV NODE_VERSION=${node}`,
      '--change', 'CMD ["node"]',
      '--message', `mmdebstrap minbase ${SUITE} + node@${node} + npm@${NPM_VERSION} (test/image/base.mjs)`,
      tar,
      tag,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The base's tag, built first when podman's store does not have it. */
export function ensureBase(root = ROOT) {
  const { tag, node } = baseTag(root);
  if (exists(tag)) return { tag, built: false };
  build(tag, node);
  return { tag, built: true };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(ensureBase().tag);
}
