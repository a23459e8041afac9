// The 2026-07-28 header value encoding (Mcp-Method, Mcp-Name, Mcp-Param-*): decoding as the gateway checks
// a client's headers, encoding as it sends an upstream's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeHeaderValue, encodeHeaderValue } from '../../../src/jsonrpc/header-value.js';

/** The rule as the spec words it, written as regular expressions: what the character scan must agree with. */
const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
const PLAIN = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/;
function reference(raw: string): string | undefined {
  const m = SENTINEL.exec(raw);
  if (m) {
    const bytes = Buffer.from(m[1]!, 'base64');
    if (bytes.toString('base64') !== m[1]) return undefined;
    const text = bytes.toString('utf8');
    return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
  }
  if (raw.startsWith('=?base64?') && raw.endsWith('?=')) return undefined;
  return raw === '' || PLAIN.test(raw) ? raw : undefined;
}

describe('header values', () => {
  it('reads plain visible ASCII as is, inner spaces and tabs included', () => {
    for (const v of ['tools/call', 'echo', 'a b', 'a\tb', '!', '~x~', 'get_weather', '=', '=?', '=?base64']) assert.equal(decodeHeaderValue(v), v);
    assert.equal(decodeHeaderValue(''), '');
  });

  it('refuses leading or trailing whitespace, control characters and anything outside ASCII', () => {
    for (const v of [' a', 'a ', '\ta', 'a\t', ' ', '\t', 'a\nb', 'a\x00b', 'a\x7fb', 'café', 'naïve', '日本']) assert.equal(decodeHeaderValue(v), undefined, JSON.stringify(v));
  });

  it('decodes the base64 sentinel as UTF-8, and refuses a sentinel with a body that is not canonical base64', () => {
    assert.equal(decodeHeaderValue(`=?base64?${Buffer.from('café').toString('base64')}?=`), 'café');
    assert.equal(decodeHeaderValue('=?base64??='), '');
    assert.equal(decodeHeaderValue('=?base64?not base64?='), undefined);
    assert.equal(decodeHeaderValue('=?base64?YQ?='), undefined); // padding left out
    assert.equal(decodeHeaderValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`), undefined); // not UTF-8
  });

  it('agrees with the rule written as regular expressions on every short value over a mixed alphabet', () => {
    const alphabet = ['a', 'Z', '0', ' ', '\t', '=', '?', '/', '+', '~', '\x1f', '\x7f', 'é', '\n'];
    let checked = 0;
    const walk = (prefix: string, depth: number): void => {
      assert.equal(decodeHeaderValue(prefix), reference(prefix), JSON.stringify(prefix));
      checked++;
      if (depth === 0) return;
      for (const c of alphabet) walk(prefix + c, depth - 1);
    };
    walk('', 4);
    for (const v of ['=?base64?YWJj?=', '=?base64?YWJj', '=?base64?YW Jj?=', '=?base64?4pyT?=', ' =?base64?YWJj?=']) assert.equal(decodeHeaderValue(v), reference(v), v);
    assert.ok(checked > 40_000);
  });

  it('encodes what is not plain, or would read as the sentinel, as base64, and every encoding decodes back', () => {
    for (const v of ['echo', 'a b', ' lead', 'trail ', '', 'café', '=?base64?YWJj?=', 'line\nbreak']) {
      const e = encodeHeaderValue(v);
      assert.equal(decodeHeaderValue(e), v, JSON.stringify(v));
    }
    assert.equal(encodeHeaderValue('echo'), 'echo');
    assert.match(encodeHeaderValue(''), /^=\?base64\?/);
    assert.match(encodeHeaderValue(' lead'), /^=\?base64\?/);
  });
});
