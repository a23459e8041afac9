import { everythingUpstream } from '../helpers/gateway.js';
import { everythingSuite } from '../helpers/everything-suite.js';

// The official SDK client, through the gateway, to the official reference server over stdio:
// every combination of client transport and upstream sharing mode.
for (const sharing of ['shared', 'per-session'] as const) {
  for (const kind of ['streamable-http', 'sse'] as const) {
    everythingSuite(`SDK ${kind} client → gateway → server-everything over stdio (${sharing})`, () => everythingUpstream('everything', sharing), kind);
  }
}
