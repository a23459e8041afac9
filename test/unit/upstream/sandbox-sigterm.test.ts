// Stopping a stdio server closes its stdin, then sends SIGTERM, then SIGKILL. In the bubblewrap sandbox
// the SIGTERM went to bubblewrap's own process group only: bubblewrap dies of it, and takes the server
// down with SIGKILL (--die-with-parent), the server's own processes being in a session of their own
// (--new-session). A server that finishes its work on SIGTERM never could. A real server in a real sandbox.
import assert from 'node:assert/strict';
import { dirname } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';

/** Ignores its stdin's end; on SIGTERM says so on stderr and exits 0. */
const SERVER = `
process.stdin.on('data', () => {}).on('end', () => {});
process.on('SIGTERM', () => process.stderr.write('finishing on SIGTERM\\n', () => process.exit(0)));
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'ready' }) + '\\n');
setInterval(() => {}, 1000);
`;

/** A Node that CI installed for a Node line lies outside the system trees bubblewrap shows. */
const NODE_DIR = dirname(process.execPath);
const NODE_MOUNT = ['/usr/', '/bin/'].some((tree) => NODE_DIR.startsWith(tree)) ? [] : [NODE_DIR];

describe('a bubblewrap server stopped (found by a review)', () => {
  it('gets SIGTERM, and may finish before it is killed', async () => {
    const entries: Array<{ msg: string; code?: number | null; signal?: string | null }> = [];
    const logger = createLogger('debug', { write: (line: string) => void entries.push(JSON.parse(line)) });
    const doc = { upstreams: [{ name: 'graceful', transport: 'stdio', command: process.execPath, args: ['-e', SERVER], sandbox: { readOnly: NODE_MOUNT } }], endpoints: [{ path: '/mcp', upstreams: ['graceful'] }] };
    const transports = new UpstreamTransports();
    const t = transports.create(parseConfig(doc, 'test', {}, '/').upstreams[0]!, logger) as import('../../../src/upstream/stdio-transport.js').StdioTransport;
    const ready = new Promise<void>((resolve) => (t.onmessage = () => resolve()));
    await t.start();
    await ready;
    await t.close();
    assert.ok(entries.some((e) => e.msg === 'finishing on SIGTERM'), 'the server never heard SIGTERM: it was killed');
  });
});
