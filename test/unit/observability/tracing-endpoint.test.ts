/**
 * Where spans go: `tracing.endpoint` is the collector's base URL and spans go to its path + /v1/traces.
 * A query in it (a collector's key, which the config view redacts) stays the query: appended to as text,
 * the path went into the query (`/?key=abc/v1/traces`) and the collector answered 404 to every export
 * (found by a review).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { loadTracing } from '../../../src/observability/load-tracing.js';
import { createLogger } from '../../../src/observability/logger.js';

describe('tracing.endpoint', () => {
  it('with a query: spans are POSTed to <path>/v1/traces with the query kept', async () => {
    const urls: string[] = [];
    const server = createServer((req, res) => {
      urls.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      for (const [endpoint, expected] of [
        [`http://127.0.0.1:${port}/?key=abc`, '/v1/traces?key=abc'],
        [`http://127.0.0.1:${port}/otlp/?key=a%2Fb&x=1`, '/otlp/v1/traces?key=a%2Fb&x=1'],
        [`http://127.0.0.1:${port}/otlp//`, '/otlp/v1/traces'],
      ] as const) {
        const tracing = await loadTracing({ enabled: true, endpoint, protocol: 'http/protobuf', sampleRatio: 1, headers: {}, recordPrincipal: false }, createLogger('silent'), {});
        tracing.server('tools/call echo', undefined, {}).end();
        await tracing.shutdown();
        assert.equal(urls.pop(), expected, endpoint);
      }
    } finally {
      server.close();
    }
  });
});
