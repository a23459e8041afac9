// A server's stdout lines that are not JSON-RPC are logged and skipped. A server writing nothing but
// short junk lines ("x\n": two bytes, each a warning of some 200 in the gateway's log) must not fill the
// log pipeline: its stderr is held to a rate already. A real child process. (Past 1000 of them it is stopped as
// a flood: test/integration/stdio-upstream.test.ts.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StdioTransport } from '../../../src/upstream/stdio-transport.js';

const LINES = 1000;
const NOT_JSON = 'upstream wrote a line that is not a JSON-RPC message; ignored';

/** LINES junk lines in a few writes, then one real message; then it waits for stdin to close. */
const SERVER = `
process.stdout.write('x\\n'.repeat(${LINES}));
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/done' }) + '\\n');
process.stdin.resume();
`;

describe('stdout lines that are not JSON-RPC', () => {
  it('are logged at a bounded rate; the rest are counted, every one of them in the protocol-violation count', async () => {
    const entries: Array<{ msg: string; kind?: string; dropped?: number }> = [];
    const logger = createLogger('info', { write: (line: string) => void entries.push(JSON.parse(line)) });
    let violations = 0;
    const t = new StdioTransport({ command: process.execPath, args: ['-e', SERVER], env: {}, maxLineBytes: 1 << 20, logger, stopGraceMs: 2000, onProtocolViolation: () => violations++ });
    const done = new Promise<JsonRpcMessage>((resolve) => (t.onmessage = resolve));
    await t.start();
    await done; // every junk line before it has been read
    await t.close();
    assert.equal(violations, LINES, 'each line counted (switchboard_upstream_protocol_violations_total)');
    const logged = entries.filter((e) => e.msg === NOT_JSON).length;
    assert.ok(logged > 0, 'the first ones are logged, with what they said');
    assert.ok(logged < LINES / 5, `${logged} warnings for ${LINES} junk lines`);
    const dropped = entries.filter((e) => /not JSON-RPC messages ignored without a warning/.test(e.msg)).reduce((n, e) => n + e.dropped!, 0);
    assert.equal(logged + dropped, LINES, 'the ones not logged are counted in the log');
  });
});
