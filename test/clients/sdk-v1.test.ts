// The official TypeScript SDK 1.x client, as an application embeds it: the README's example, with
// sampling and elicitation handlers, over Streamable HTTP and the legacy HTTP+SSE transport.
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { clientSuite } from './client-suite.js';
import { MATRIX } from './matrix.js';
import { sdkV1Client } from './sdk-v1-client.js';

clientSuite(MATRIX.sdkV1, async (transport, qs) => {
  const requestInit = { headers: { Authorization: `Bearer ${qs.token()}` } };
  return sdkV1Client(
    'client-matrix',
    transport === 'sse' ? new SSEClientTransport(new URL(`${qs.base}/sse`), { requestInit }) : new StreamableHTTPClientTransport(new URL(`${qs.base}/mcp`), { requestInit }),
  );
});
