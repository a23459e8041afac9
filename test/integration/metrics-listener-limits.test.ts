// The metrics listener (Prometheus /metrics, a port of its own) kept node's defaults after the admin
// listener got its limits: it took any number of connections and kept a silent one about 60 s (node's
// headers deadline, checked every 30 s), so anyone reaching the port could hold connections until the
// process ran out of file descriptors, which the MCP listener shares. It now closes connections beyond
// metrics.maxConnections at accept (logged) and applies the MCP listener's deadlines
// (server.headersTimeoutMs, server.bodyTimeoutMs). Real gateway, real sockets.
import { listenerLimitsSuite } from '../helpers/listener-limits-suite.js';

listenerLimitsSuite('metrics listener limits', {
  setting: 'metrics.maxConnections',
  config: { metrics: { port: 0, maxConnections: 4 } },
  url: (gw) => gw.app.metricsUrl!,
  request: 'GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n',
  answers: async (gw) => (await fetch(gw.app.metricsUrl!).catch(() => undefined))?.status === 200,
});
