// An upstream's own requests (sampling, elicitation) go to the client of the session they belong to, and
// wait for its answer up to session.clientRequestTimeoutMs (5 min: a person may take that long). A server
// sending them without end (some 80 bytes each, as fast as its pipe takes them) had every one put to the
// client (a person shown thousands of prompts) and kept in the gateway's memory for those minutes. A real
// child process behind the real transport and client; the client never answers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import type { UpstreamCaller } from '../../../src/upstream/upstream-caller.js';
import { StdioTransport } from '../../../src/upstream/stdio-transport.js';
import { UpstreamClient } from '../../../src/upstream/upstream-client.js';
import { until } from '../../helpers/wait.js';

const ASKS = 1_000;

/** Initialized, sends ASKS elicitations; says how many were answered with an error, once all but a few are. */
const server = (ids: string) => `
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
let refused = 0;
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'asker', version: '1' } } });
  if (m.method === 'notifications/initialized') {
    let out = '';
    for (let i = 0; i < ${ASKS}; i++) out += JSON.stringify({ jsonrpc: '2.0', id: ${ids}, method: 'elicitation/create', params: { mode: 'form', message: 'pick ' + i, requestedSchema: { type: 'object', properties: {} } } }) + '\\n';
    return process.stdout.write(out);
  }
  if (m.error && ++refused >= ${ASKS} - 100) send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { refused } } });
});
`;

describe('an upstream that asks its client without end', () => {
  it('has a bounded number of its requests put to the client at once; the rest are refused at once', () => asks("'ask-' + i"));

  it('the same when it gives them all one id (each was put to the client, the count saw one)', () => asks("'ask'"));
});

/** A server sending ASKS elicitations with ids made by `ids` (JavaScript of `i`), to a client that never answers. */
async function asks(ids: string): Promise<void> {
  const logger = createLogger('silent');
  const t = new StdioTransport({ command: process.execPath, args: ['-e', server(ids)], env: {}, maxLineBytes: 1 << 20, logger, stopGraceMs: 2000 });
  let asked = 0;
  let refused = 0;
  // A client that never answers (away, or a person who has not looked yet).
  const caller: UpstreamCaller = { id: 's1', tenant: 't', clientRequest: () => (asked++, new Promise(() => {})), clientNotify: () => {} };
  const client = new UpstreamClient('asker', t, logger, {
    resolveCaller: () => ({ caller, relatedRequestId: undefined }),
    onNotification: (_method, params) => void (refused = Number((params?.data as { refused?: number } | undefined)?.refused ?? refused)),
  });
  await t.start();
  try {
    await client.initialize(10_000, true); // dedicated: offered elicitation
    await until('the upstream to hear most of its requests refused', () => refused >= ASKS - 100);
    assert.ok(asked <= 100, `${asked} of ${ASKS} requests were put to the client at once`);
    assert.ok(asked > 0, 'some were');
  } finally {
    await client.close();
  }
}
