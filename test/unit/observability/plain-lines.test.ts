// Info lines written by PlainLines must be the bytes pino itself writes for the same logger and members.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino, type Logger } from 'pino';
import { createLogger } from '../../../src/observability/logger.js';
import { PlainLines } from '../../../src/observability/plain-lines.js';

/** A destination that keeps every write, and a fixed clock for both loggers' time stamps. */
function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  return { lines, stream: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }) };
}

function both(make: (dest: Writable) => Logger, fields: Record<string, unknown>, msg = 'audit'): { pino: string[]; plain: string[]; direct: boolean } {
  const a = capture();
  const b = capture();
  const viaPino = make(a.stream);
  const viaPlain = make(b.stream);
  const writer = new PlainLines(viaPlain);
  viaPino.info(fields, msg);
  writer.info(fields, msg);
  return { pino: a.lines, plain: b.lines, direct: writer.direct };
}

const FIXED_TIME = () => ',"time":"2026-12-03T20:50:12.345Z"';
const auditChild = (dest: Writable, mixin?: () => object): Logger =>
  pino({ level: 'info', base: { service: 'switchboard' }, timestamp: FIXED_TIME, redact: { paths: ['*.token', 'headers.authorization'], censor: '[redacted]' }, ...(mixin ? { mixin } : {}) }, dest).child({ audit: true }, { redact: [] });

const EVENT = {
  tenant: 'acme',
  subject: 'user-1',
  session: '0b6f1c7e-4c5e-4d1a-9a55-2f7b2d0c1e11',
  endpoint: '/mcp',
  method: 'tools/call',
  upstream: 'github',
  name: 'github__create_issue',
  decision: 'allow',
  rule: 'tenant:acme',
  outcome: 'ok',
  latencyMs: 12.345678,
  responseBytes: 2048,
};

describe('PlainLines', () => {
  it('writes the audit child\'s line exactly as pino does (redaction configured on the parent, none on the child)', () => {
    const r = both((d) => auditChild(d), EVENT);
    assert.equal(r.direct, true);
    assert.equal(r.plain.length, 1);
    assert.deepEqual(r.plain, r.pino);
  });

  it('matches pino for undefined members, odd strings, numbers pino writes as null, booleans and an argument hash', () => {
    const odd = [
      'quote " and backslash \\',
      'tab\tnewline\ncontrol\u0001',
      'unicode é 日本 🎉',
      'line separator \u2028 paragraph \u2029',
      'x'.repeat(150) + '"',
      '',
      '</script>',
    ];
    for (const s of odd) {
      const fields = { ...EVENT, tenant: s, subject: s, upstream: undefined, confirmation: undefined, latencyMs: Number.NaN, responseBytes: Number.POSITIVE_INFINITY, argumentsSha256: 'ab'.repeat(32), flag: true, zero: -0 };
      const r = both((d) => auditChild(d), fields);
      assert.deepEqual(r.plain, r.pino, JSON.stringify(s));
      assert.deepEqual(JSON.parse(r.plain[0]!), JSON.parse(r.pino[0]!));
    }
  });

  it('puts a mixin\'s members first, as pino does (trace ids when tracing is on), and a line\'s own member wins a name both have', () => {
    const mixin = () => ({ trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16), tenant: 'from-mixin' });
    const r = both((d) => auditChild(d, mixin), EVENT);
    assert.deepEqual(r.plain, r.pino);
    assert.equal(JSON.parse(r.plain[0]!).tenant, 'acme');
    const none = both((d) => auditChild(d, () => ({})), EVENT);
    assert.deepEqual(none.plain, none.pino);
  });

  it('writes nothing when info is off, and follows a level changed later', () => {
    const c = capture();
    const logger = auditChild(c.stream);
    const writer = new PlainLines(logger);
    logger.level = 'warn';
    writer.info(EVENT, 'audit');
    assert.equal(c.lines.length, 0);
    logger.level = 'info';
    writer.info(EVENT, 'audit');
    assert.equal(c.lines.length, 1);
  });

  it('leaves a logger it cannot match byte for byte to pino: redaction, serializers, log formatters, a stream hook', () => {
    const makers: Array<(d: Writable) => Logger> = [
      (d) => pino({ timestamp: FIXED_TIME, redact: ['tenant'] }, d),
      (d) => pino({ timestamp: FIXED_TIME, serializers: { tenant: (v: string) => v.toUpperCase() } }, d),
      (d) => pino({ timestamp: FIXED_TIME, formatters: { log: (o: Record<string, unknown>) => ({ ...o, extra: 1 }) } }, d),
      (d) => pino({ timestamp: FIXED_TIME, hooks: { streamWrite: (s: string) => s.replace('acme', 'ACME') } }, d),
    ];
    for (const make of makers) {
      const r = both(make, EVENT);
      assert.equal(r.direct, false);
      assert.deepEqual(r.plain, r.pino);
    }
  });

  it('on the gateway\'s own logger (createLogger), with its real time stamps, parses to what pino writes', () => {
    const a = capture();
    const b = capture();
    const viaPino = createLogger('info', a.stream).child({ audit: true }, { redact: [] });
    const writer = new PlainLines(createLogger('info', b.stream).child({ audit: true }, { redact: [] }));
    assert.equal(writer.direct, true);
    viaPino.info(EVENT, 'audit');
    writer.info(EVENT, 'audit');
    const [x, y] = [JSON.parse(a.lines[0]!), JSON.parse(b.lines[0]!)];
    assert.match(y.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    delete x.time;
    delete y.time;
    assert.deepEqual(y, x);
    assert.deepEqual(Object.keys(JSON.parse(b.lines[0]!)), Object.keys(JSON.parse(a.lines[0]!)));
    assert.ok(b.lines[0]!.endsWith('}\n'));
  });
});
