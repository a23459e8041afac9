// The admin listener took every connection offered and kept a silent one for node's default 60 s (its
// deadlines checked every 30 s): anyone who could reach the admin port (admin.host off loopback, in a
// cluster) could hold connections without a token until the process ran out of file descriptors, which
// the MCP listener shares. It now closes connections beyond admin.maxConnections at accept (logged) and
// applies the MCP listener's deadlines (server.headersTimeoutMs, server.bodyTimeoutMs). Real gateway,
// real sockets.
import { listenerLimitsSuite } from '../helpers/listener-limits-suite.js';

const TOKEN = 'limits-admin-token-0123456789-abcdefghij';

listenerLimitsSuite('admin listener limits', {
  setting: 'admin.maxConnections',
  config: { admin: { enabled: true, port: 0, token: TOKEN, maxConnections: 4 } },
  url: (gw) => gw.app.adminUrl!,
  request: `GET /openapi.json HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TOKEN}\r\n\r\n`,
  answers: async (gw) => (await fetch(new URL('/openapi.json', gw.app.adminUrl), { headers: { authorization: `Bearer ${TOKEN}` } }).catch(() => undefined))?.status === 200,
});
