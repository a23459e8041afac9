// `npm run compose:test`: the compose file against the Compose Specification and the Prometheus files through
// promtool (test/compose/compose.test.ts), and the Grafana dashboard's queries against a real Prometheus
// scraping a real gateway (test/compose/dashboard.test.ts). The schema comes from npm once (test/chart/tools.mjs).
import { spawnSync } from 'node:child_process';
import { chartTools } from '../chart/tools.mjs';

const { composeSchema } = chartTools();
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', 'test/compose/compose.test.ts', 'test/compose/dashboard.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, SWB_COMPOSE_SCHEMA: composeSchema },
});
console.log('SKIP compose up: no registry here serves the redis, prom/prometheus and grafana/grafana images, and Grafana is packaged neither by Debian nor on npm (the dashboard is checked against Debian\'s Prometheus instead)');
process.exit(r.status ?? 1);
