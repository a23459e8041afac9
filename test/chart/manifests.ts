// helm and the Kubernetes schemas for the chart suite: rendering, and validating what was rendered the
// way kubeconform does with -strict, offline. `npm run chart:test` (test/chart/run.ts) installs the tools
// (test/chart/tools.mjs) and passes their paths in SWB_HELM and SWB_CHART_MODULES.
//  - Types, enums, required fields and formats: the validators kubernetes-models compiled from the
//    Kubernetes OpenAPI schemas (and from the ServiceMonitor CRD), called through each model's validate().
//  - Unknown fields, which those schemas allow: every manifest typed as the package's interface for its
//    kind in a generated TypeScript file; tsc's excess-property check names each field the API lacks.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { runToExit } from '../helpers/processes.js';

export type Json = Record<string, any>;
export const HELM = process.env.SWB_HELM ?? '';
const MODULES = process.env.SWB_CHART_MODULES ?? '';
export const CHART = 'helm/switchboard';
const TSC = join('node_modules', 'typescript', 'bin', 'tsc');

export async function helm(args: string[]): Promise<{ code: number | null; out: string; stdout: string }> {
  return runToExit(HELM, args, { timeoutMs: 60_000 });
}

/** `helm template` with these values files and --set pairs: the manifests, parsed. */
export async function render(valuesFiles: string[], sets: string[] = []): Promise<Json[]> {
  const r = await helm(['template', 'swb', CHART, ...valuesFiles.flatMap((f) => ['-f', f]), ...sets.flatMap((s) => ['--set', s])]);
  if (r.code !== 0) throw new Error(`helm template failed: ${r.out}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Json | null)
    .filter((m): m is Json => m !== null);
}

export const nameOf = (m: Json) => `${m.kind}/${m.metadata?.name}`;

/** Where a kind's model lives: core v1 at kubernetes-models/v1, groups at kubernetes-models/<group>/<version>, CRDs in their own package. */
function modelPath(apiVersion: string, kind: string): string | undefined {
  if (apiVersion === 'monitoring.coreos.com/v1') return `@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${kind}`;
  if (/^([a-z0-9.-]+\/)?v\d+((alpha|beta)\d+)?$/.test(apiVersion)) return `kubernetes-models/${apiVersion}/${kind}`;
  return undefined;
}

/** Schema problems (types, enums, required, formats), one line each, with the manifest and the JSON path. */
async function schemaProblems(manifests: Json[]): Promise<string[]> {
  const problems: string[] = [];
  for (const m of manifests) {
    const path = modelPath(String(m.apiVersion), String(m.kind));
    if (!path) {
      problems.push(`${nameOf(m)}: no schema for apiVersion ${m.apiVersion}`);
      continue;
    }
    let Model: new (data: Json) => { validate(): void };
    try {
      Model = (await import(pathToFileURL(join(MODULES, `${path}.js`)).href))[m.kind];
    } catch {
      problems.push(`${nameOf(m)}: no schema for ${m.apiVersion} ${m.kind}`);
      continue;
    }
    try {
      new Model(m).validate();
    } catch (err) {
      problems.push(`${nameOf(m)}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/** Fields the API does not have, found by tsc's excess-property check against the kinds' interfaces. */
async function unknownFieldProblems(manifests: Json[]): Promise<string[]> {
  // Beside the schema packages' node_modules, so that their imports resolve.
  const dir = mkdtempSync(join(dirname(MODULES), 'strict-'));
  try {
    const lines: string[] = [];
    const owner: string[] = []; // the manifest of each line of the file
    manifests.forEach((m, i) => {
      const path = modelPath(String(m.apiVersion), String(m.kind));
      if (!path) return;
      lines.push(`import type { I${m.kind} as T${i} } from '${path}';`);
      owner.push(nameOf(m));
    });
    manifests.forEach((m, i) => {
      if (!modelPath(String(m.apiVersion), String(m.kind))) return;
      const body = `export const m${i}: T${i} = ${JSON.stringify(m, null, 2)};`.split('\n');
      lines.push(...body);
      owner.push(...body.map(() => nameOf(m)));
    });
    writeFileSync(join(dir, 'manifests.ts'), lines.join('\n'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const options = { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: true, types: [] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: ['manifests.ts'] }));
    const r = await runToExit(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { timeoutMs: 120_000 });
    if (r.code === 0) return [];
    return r.stdout
      .split('\n')
      .filter((l) => l.includes('error TS'))
      .map((l) => {
        const m = /manifests\.ts\((\d+),\d+\): error TS\d+: (.*)$/.exec(l);
        if (!m) return l;
        const line = Number(m[1]) - 1;
        return `${owner[line] ?? '?'}: ${m[2]} (at ${lines[line]?.trim()})`;
      });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every problem the schemas find in these manifests: none for a valid set. */
export async function validate(manifests: Json[]): Promise<string[]> {
  mkdirSync(dirname(MODULES), { recursive: true });
  return [...(await schemaProblems(manifests)), ...(await unknownFieldProblems(manifests))];
}
