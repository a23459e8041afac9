import { everythingSuite } from '../helpers/everything-suite.js';
import { startRemoteEverything, type RemoteEverything } from '../helpers/everything-http.js';

// The same SDK-client suite as for stdio, with server-everything reached over the network in its
// Streamable HTTP and legacy SSE modes.
for (const mode of ['streamableHttp', 'sse'] as const) {
  for (const sharing of ['shared', 'per-session'] as const) {
    for (const kind of ['streamable-http', 'sse'] as const) {
      let remote: RemoteEverything | undefined;
      everythingSuite(
        `SDK ${kind} client → gateway → server-everything over ${mode === 'sse' ? 'HTTP+SSE' : 'Streamable HTTP'} (${sharing})`,
        async () => {
          remote = await startRemoteEverything(mode);
          return {
            name: 'everything',
            transport: mode === 'sse' ? ('sse' as const) : ('streamable-http' as const),
            url: remote.url,
            sharing,
            pool: { size: 1, warm: 1, max: 20 },
          };
        },
        kind,
        async () => remote?.stop(),
      );
    }
  }
}
