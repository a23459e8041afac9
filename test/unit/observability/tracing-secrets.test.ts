// The OTLP exporter's secrets (tracing.headers, credentials in tracing.endpoint) must not reach
// the admin API's config view nor the log.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/index.js';
import { redactConfig } from '../../../src/config/redact.js';
import { createLogger } from '../../../src/observability/logger.js';
import { loadTracing } from '../../../src/observability/load-tracing.js';

const base = { upstreams: [{ name: 'u', transport: 'stdio', command: 'node', sandbox: 'none' }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] };

describe('tracing secrets', () => {
  it('redactConfig hides tracing.headers values and credentials in tracing.endpoint (admin API GET config)', () => {
    const tracing = { enabled: true, endpoint: 'https://user:url-s3cret@otlp.vendor.example/?api_key=query-s3cret', headers: { 'x-api-key': 'header-s3cret' } };
    const c = parseConfig({ ...base, tracing }, 'test', {}, '/tmp');
    const shown = JSON.stringify(redactConfig(c));
    for (const secret of ['header-s3cret', 'url-s3cret', 'query-s3cret']) assert.ok(!shown.includes(secret), `${secret} shown: ${JSON.stringify(redactConfig(c).tracing)}`);
  });

  it('the start-up log line does not carry credentials of tracing.endpoint', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const tracing = await loadTracing({ enabled: true, endpoint: 'http://user:url-s3cret@127.0.0.1:9/', protocol: 'http/protobuf', sampleRatio: 1, headers: {}, recordPrincipal: false }, logger, {});
    await tracing.shutdown();
    const leaked = lines.filter((l) => l.includes('url-s3cret'));
    assert.deepEqual(leaked, []);
  });
});
