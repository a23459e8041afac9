// audit.hashArguments: a plain SHA-256 of a call's arguments is undone by hashing guesses (a four-digit PIN
// takes 10,000 tries); with audit.hashKey the line carries an HMAC under that key instead, the key is
// redacted from the admin API's config, and a config hashing without a key is warned about.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { redactConfig } from '../../../src/config/redact.js';
import { configWarnings } from '../../../src/config/warnings.js';
import { createLogger } from '../../../src/observability/logger.js';
import { AuditLog, type AuditEvent, type AuditLine } from '../../../src/policy/audit-log.js';

const KEY = 'k'.repeat(16) + 'audit-hash-key-32-characters';
const EVENT: AuditEvent = { tenant: 't', subject: 's', session: 'sid', endpoint: '/mcp', method: 'tools/call', upstream: 'u', name: 'unlock', decision: 'allow', rule: 'tools.allow:*', outcome: 'ok', latencyMs: 1, responseBytes: 2 };
const ARGS = { pin: '4711' };

function lineOf(audit: AuditLog): AuditLine {
  const lines: AuditLine[] = [];
  const stop = audit.tail((l) => lines.push(l));
  audit.record(EVENT, ARGS);
  stop();
  return lines[0]!;
}

const config = (audit: Record<string, unknown>) =>
  parseConfig({ audit, upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, sandbox: 'none' }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {}, '/tmp');

describe('audit: the hash of a call\'s arguments', () => {
  const logger = createLogger('silent');

  it('without a key: a plain SHA-256, which a guess of a short argument matches', () => {
    const line = lineOf(new AuditLog(logger, true));
    const guess = createHash('sha256').update(JSON.stringify({ pin: '4711' })).digest('hex');
    assert.equal(line.argumentsSha256, guess);
  });

  it('with audit.hashKey: an HMAC under it, and no plain hash a guess could match', () => {
    const line = lineOf(new AuditLog(logger, true, KEY));
    assert.equal(line.argumentsHmacSha256, createHmac('sha256', KEY).update(JSON.stringify(ARGS)).digest('hex'));
    assert.equal('argumentsSha256' in line, false);
    assert.ok(!JSON.stringify(line).includes('4711'));
  });

  it('hashing without a key is warned about; with a key, or without hashing, it is not', () => {
    assert.equal(configWarnings(config({ hashArguments: true }), []).filter((w) => w.startsWith('audit.hashArguments')).length, 1);
    assert.equal(configWarnings(config({ hashArguments: true, hashKey: KEY }), []).filter((w) => w.startsWith('audit.')).length, 0);
    assert.equal(configWarnings(config({}), []).filter((w) => w.startsWith('audit.')).length, 0);
  });

  it('the key is redacted from the config the admin API shows, and a short one is refused', () => {
    assert.ok(!JSON.stringify(redactConfig(config({ hashArguments: true, hashKey: KEY }))).includes(KEY));
    assert.throws(() => config({ hashArguments: true, hashKey: 'short' }), /audit\.hashKey/);
  });
});
