// What an Accept header lets the Streamable HTTP edge answer with (RFC 9110 §12.5.1): media ranges
// matched whole, not as substrings, the most specific range deciding, and q=0 meaning "not this".
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptsBoth, acceptsSse } from '../../../src/edge/replies.js';

describe('Accept: what a POST may be answered with (JSON and SSE both)', () => {
  it('accepts the usual headers, in any order, case, spacing and with parameters', () => {
    for (const a of [
      'application/json, text/event-stream',
      'text/event-stream, application/json',
      'application/json,text/event-stream',
      'Application/JSON, Text/Event-Stream',
      'application/json; charset=utf-8, text/event-stream;q=0.5',
      '*/*',
      'application/*, text/*',
      'application/json, */*;q=0.1',
    ]) {
      assert.equal(acceptsBoth(a), true, a);
    }
  });

  it('refuses what only looks like it: other subtypes, q=0, a range missing', () => {
    for (const a of [
      undefined,
      '',
      'application/json',
      'text/event-stream',
      'application/json-seq, text/event-stream',
      'application/jsonx, text/event-stream',
      'application/json;q=0, text/event-stream',
      'application/json; q=0.000, text/event-stream',
      'application/json, text/event-stream;q=0',
      '*/*, application/json;q=0',
      'text/event-stream, application/*;q=0',
      'text/event-streams, application/json',
      'foo/*/*, application/json',
    ]) {
      assert.equal(acceptsBoth(a), false, String(a));
    }
  });
});

describe('Accept: whether a GET may be answered with a stream', () => {
  it('accepts text/event-stream, text/* and */* with q above 0', () => {
    for (const a of ['text/event-stream', 'TEXT/EVENT-STREAM', 'text/*', '*/*', 'application/json, text/event-stream;q=0.2']) assert.equal(acceptsSse(a), true, a);
  });

  it('refuses another type, a look-alike, or q=0', () => {
    for (const a of [undefined, 'application/json', 'text/event-streamx', 'text/event-stream;q=0', '*/*, text/event-stream;q=0', 'x-text/event-stream']) {
      assert.equal(acceptsSse(a), false, String(a));
    }
  });
});
