// The audit trail does not follow the log level: a gateway at `logging.level: warn` (or error, or fatal)
// still writes the audit line of every call. Audit lines were info lines of the gateway's logger, so an
// operator who quietened the logs dropped the whole trail with them, without a word. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

type Line = Record<string, unknown>;

async function auditedAt(level: string, audit?: { enabled: boolean }): Promise<{ audit: Line[]; lines: string[] }> {
  const lines: string[] = [];
  const gw = await startGateway(
    {
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['one'] }],
      ...(audit ? { audit } : {}),
    },
    { logLines: lines, level },
  );
  try {
    const client = await connectClient(gw, 'streamable-http');
    await client.callTool({ name: 'test_simple_text', arguments: {} });
    // A denied call too: its line is written on another path (the policy's refusal).
    await client.callTool({ name: 'no_such_tool', arguments: {} }).catch(() => undefined);
    await client.close();
  } finally {
    await gw.close();
  }
  return { audit: lines.filter((l) => l.includes('"audit":true')).map((l) => JSON.parse(l) as Line), lines };
}

describe('audit lines, whatever the log level', () => {
  it('level warn: the calls are audited; info lines are not written', async () => {
    const { audit, lines } = await auditedAt('warn');
    const call = audit.find((l) => l.name === 'test_simple_text');
    assert.ok(call, JSON.stringify(audit));
    assert.equal(call.msg, 'audit');
    assert.equal(call.outcome, 'ok');
    assert.equal(call.level, 30, 'an audit line keeps its level (info), whatever the logger is set to');
    const info = lines.filter((l) => !l.includes('"audit":true') && l.includes('"level":30'));
    assert.deepEqual(info, [], 'the other info lines follow logging.level');
  });

  it('level error: the calls are audited still', async () => {
    const { audit } = await auditedAt('error');
    assert.ok(audit.some((l) => l.name === 'test_simple_text'), JSON.stringify(audit));
  });

  it('audit.enabled false turns the audit off; so does level silent, which writes nothing at all', async () => {
    assert.deepEqual((await auditedAt('warn', { enabled: false })).audit, []);
    assert.deepEqual((await auditedAt('silent')).lines, []);
  });
});
