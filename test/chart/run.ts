// `npm run chart:test`: helm lint and helm template of the chart in each mode, the rendered manifests
// validated against the Kubernetes schemas, the ConfigMap's config through check-config, typos in values
// refused. Installs helm and the schema packages from npm once (test/chart/tools.mjs), then runs
// test/chart/*.test.ts with their paths in SWB_HELM and SWB_CHART_MODULES.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { chartTools } from './tools.mjs';

const started = Date.now();
const { helm, modules } = chartTools();
const suites = readdirSync('test/chart').filter((f) => f.endsWith('.test.ts')).sort().map((f) => join('test/chart', f));
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=300000', ...suites], {
  stdio: 'inherit',
  env: { ...process.env, SWB_HELM: helm, SWB_CHART_MODULES: modules, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
});
console.log(`chart:test took ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(r.status ?? 1);
