// `npm run compose:test`: the compose file against the Compose Specification and the Prometheus files through
// promtool (test/compose/compose.test.ts). The schema comes from npm once (test/chart/tools.mjs).
import { spawnSync } from 'node:child_process';
import { chartTools } from '../chart/tools.mjs';

const { composeSchema } = chartTools();
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', 'test/compose/compose.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, SWB_COMPOSE_SCHEMA: composeSchema },
});
console.log('SKIP compose up: no registry here serves the redis, prom/prometheus and grafana/grafana images, and Grafana is packaged neither by Debian nor on npm');
process.exit(r.status ?? 1);
