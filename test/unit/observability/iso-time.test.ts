// The log lines' time stamp: pino's isoTime member, made from a per-second prefix and a table of milliseconds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { isoTimeFunction } from '../../../src/observability/iso-time.js';

describe('isoTimeFunction', () => {
  it('writes what pino.stdTimeFunctions.isoTime writes, for every millisecond across second, day and year boundaries', () => {
    let now = 0;
    const time = isoTimeFunction(() => now);
    const starts = [Date.UTC(2026, 11, 3, 20, 50, 11, 990), Date.UTC(2026, 11, 31, 23, 59, 59, 0), Date.UTC(2024, 1, 29, 0, 0, 0, 0), 0, -1500, Date.UTC(10000, 0, 1)];
    for (const start of starts) {
      for (let t = start; t < start + 2500; t++) {
        now = t;
        assert.equal(time(), `,"time":"${new Date(t).toISOString()}"`);
      }
    }
  });

  it('is right when the clock goes back (a step of the system clock) or jumps ahead', () => {
    let now = Date.UTC(2026, 11, 3, 20, 0, 5, 500);
    const time = isoTimeFunction(() => now);
    for (const t of [now, now - 1000, now - 1, now + 3_600_000, now + 3_600_000 + 999, now]) {
      now = t;
      assert.equal(time(), `,"time":"${new Date(t).toISOString()}"`);
    }
  });

  it('reads the real clock by default, in pino\'s format', () => {
    const line = isoTimeFunction()();
    assert.match(line, /^,"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$/);
    assert.equal(line.length, pino.stdTimeFunctions.isoTime().length);
  });
});
