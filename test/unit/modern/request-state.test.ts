import assert from 'node:assert/strict';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { toJsonRpcError } from '../../../src/errors.js';
import { MemoryUsedTokens } from '../../../src/modern/memory-used-tokens.js';
import { digestParams } from '../../../src/modern/params-digest.js';
import { RequestStateError, type RequestStateRejection } from '../../../src/modern/request-state-error.js';
import { deriveKey, resolveRequestStateKeys } from '../../../src/modern/request-state-keys.js';
import { RequestStateSealer, type RequestStateExpectation, type RequestStateInput } from '../../../src/modern/request-state.js';

const KEY = randomBytes(32).toString('base64');
const OTHER = randomBytes(32).toString('base64url');
const TTL = 300_000;
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

let clock = 1_760_000_000_000;
const now = () => clock;

function sealer(current = KEY, previous: string[] = []): RequestStateSealer {
  return new RequestStateSealer({ keys: { current, previous }, ttlMs: TTL, used: new MemoryUsedTokens({ now }), now });
}

const principal = { issuer: 'https://idp.example.com', subject: 'alice', tenant: 'acme' };
const params = {
  _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', progressToken: 7 },
  name: 'github__create_issue',
  arguments: { title: 'Broken build', labels: ['ci', 'urgent'], body: { text: 'é ✓', lines: 2 } },
};

function input(over: Partial<RequestStateInput> = {}): RequestStateInput {
  return { principal, method: 'tools/call', target: 'github__create_issue', endpoint: '/mcp', argumentsDigest: digestParams(params), continuationId: 'cont-1', replicaId: 'replica-a', ...over };
}

function expectation(over: Partial<RequestStateExpectation> = {}): RequestStateExpectation {
  return { principal, method: 'tools/call', target: 'github__create_issue', endpoint: '/mcp', argumentsDigest: digestParams(params), ...over };
}

/** open() must throw a RequestStateError with this reason. */
function refused(s: RequestStateSealer, token: unknown, reason: RequestStateRejection, expect = expectation()): void {
  assert.throws(
    () => s.open(token, expect),
    (err: unknown) => err instanceof RequestStateError && err.reason === reason && err.code === 'SWB_REQUEST_STATE_INVALID',
    `expected ${reason} for ${JSON.stringify(token)?.slice(0, 80)}`,
  );
}

describe('RequestStateSealer: round trip', () => {
  it('seals into a URL-safe, versioned string that opens to the claims', () => {
    const s = sealer();
    const token = s.seal(input());
    assert.match(token, /^swb1\.[A-Za-z0-9_-]{4}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    assert.equal(encodeURIComponent(token), token);
    const claims = s.open(token, expectation());
    assert.match(claims.stateId, /^[A-Za-z0-9_-]{16}$/);
    assert.deepEqual(claims, { ...input(), issuedAt: clock, expiresAt: clock + TTL, stateId: claims.stateId });
  });

  it('nothing of the claims is readable in the token, and each seal is new (fresh IV and state id)', () => {
    const s = sealer();
    const a = s.seal(input());
    const b = s.seal(input());
    assert.notEqual(a, b);
    assert.notEqual(s.open(a, expectation()).stateId, s.open(b, expectation()).stateId);
    const decoded = a.split('.').slice(1).map((p) => Buffer.from(p, 'base64url').toString('latin1')).join('');
    for (const secret of ['alice', 'acme', 'github', 'tools/call', 'cont-1', 'replica-a']) assert.ok(!decoded.includes(secret), secret);
  });

  it('takes an expiry from the caller, and a full Principal (scopes are not bound)', () => {
    const s = sealer();
    const token = s.seal(input({ expiresAt: clock + 1234, principal: { ...principal, scopes: new Set(['x']) } as typeof principal }));
    const claims = s.open(token, expectation({ principal: { ...principal, scopes: new Set(['y']) } as typeof principal }));
    assert.equal(claims.expiresAt, clock + 1234);
    assert.deepEqual(claims.principal, principal);
  });
});

describe('RequestStateSealer: integrity', () => {
  it('a changed character anywhere after the version is tampered; in the version or a separator, malformed', () => {
    const s = sealer();
    const token = s.seal(input());
    for (let i = 0; i < token.length; i++) {
      const c = token[i]!;
      const other = B64URL[(B64URL.indexOf(c) + 1 + (i % 7)) % B64URL.length]!;
      const changed = token.slice(0, i) + other + token.slice(i + 1);
      refused(s, changed, i < 5 || c === '.' ? 'malformed' : 'tampered');
    }
  });

  it('every flipped bit of every decoded byte is tampered', () => {
    const s = sealer();
    const [version, ...parts] = s.seal(input()).split('.');
    parts.forEach((part, p) => {
      const bytes = Buffer.from(part, 'base64url');
      for (let i = 0; i < bytes.length; i++) {
        for (let bit = 0; bit < 8; bit++) {
          const copy = Buffer.from(bytes);
          copy[i]! ^= 1 << bit;
          const changed = [...parts];
          changed[p] = copy.toString('base64url');
          refused(s, [version, ...changed].join('.'), 'tampered');
        }
      }
    });
  });

  it('a token sealed with another key is tampered', () => {
    refused(sealer(KEY), sealer(OTHER).seal(input()), 'tampered');
    refused(sealer(OTHER), sealer(KEY).seal(input()), 'tampered');
  });

  it('rotation: a previous key opens what it sealed, never seals; the current key seals', () => {
    const before = sealer(OTHER);
    const after = sealer(KEY, [OTHER]);
    const old = before.seal(input());
    assert.equal(after.open(old, expectation()).continuationId, 'cont-1');
    const fresh = after.seal(input());
    refused(before, fresh, 'tampered');
    assert.equal(sealer(KEY).open(fresh, expectation()).continuationId, 'cont-1');
    // Once the old key is dropped from the list, its tokens stop opening.
    refused(sealer(KEY), old, 'tampered');
  });

  it('key material: hex, base64 and base64url of the same 32 bytes are one key; a passphrase is its own; short ones are refused', () => {
    const raw = randomBytes(32);
    const token = sealer(raw.toString('hex')).seal(input());
    assert.ok(sealer(raw.toString('base64')).open(token, expectation()));
    assert.ok(sealer(raw.toString('base64url')).open(token, expectation()));
    const phrase = 'correct horse battery staple, and then some more words';
    assert.ok(sealer(phrase).open(sealer(phrase).seal(input()), expectation()));
    refused(sealer(phrase.toUpperCase()), sealer(phrase).seal(input()), 'tampered');
    assert.throws(() => sealer('too short'), /at least 32 characters/);
    // The id in the token is derived apart from the AES key: not a prefix of it, not the raw key's.
    const k = deriveKey(raw.toString('hex'));
    assert.equal(k.id.length, 3);
    assert.ok(!k.aes.subarray(0, 3).equals(k.id) && !raw.subarray(0, 3).equals(k.id));
  });
});

describe('RequestStateSealer: binding', () => {
  it('expires at expiresAt by the injected clock', () => {
    const s = sealer();
    const token = s.seal(input());
    clock += TTL - 1;
    assert.ok(s.open(token, expectation()));
    clock += 1;
    refused(s, token, 'expired');
  });

  it('another issuer, subject or tenant is wrong-principal', () => {
    const s = sealer();
    const token = s.seal(input());
    for (const over of [{ issuer: 'https://other.example.com' }, { subject: 'mallory' }, { tenant: 'globex' }]) {
      refused(s, token, 'wrong-principal', expectation({ principal: { ...principal, ...over } }));
    }
  });

  it('another method, target or arguments digest is wrong-request', () => {
    const s = sealer();
    const token = s.seal(input());
    refused(s, token, 'wrong-request', expectation({ method: 'prompts/get' }));
    refused(s, token, 'wrong-request', expectation({ target: 'github__delete_repo' }));
    const changed = { ...params, arguments: { ...params.arguments, title: 'Other' } };
    refused(s, token, 'wrong-request', expectation({ argumentsDigest: digestParams(changed) }));
    // Another endpoint of the gateway: the same request there is another request.
    refused(s, token, 'wrong-request', expectation({ endpoint: '/other' }));
  });

  it('the principal is checked before the request: a stranger learns nothing about the request', () => {
    const s = sealer();
    refused(s, s.seal(input()), 'wrong-principal', expectation({ principal: { ...principal, subject: 'x' }, method: 'x' }));
  });
});

describe('RequestStateSealer: malformed input never crashes', () => {
  it('refuses non-strings, empty, garbage, another version, extra or missing parts as malformed', () => {
    const s = sealer();
    const token = s.seal(input());
    const [, kid, iv, body, tag] = token.split('.');
    const cases: unknown[] = [
      undefined, null, 42, true, {}, [], [token], { toString: () => token },
      '', ' ', 'garbage', 'swb1', 'swb1.', 'swb1....', '....', token.replace('swb1', 'swb2'), token.replace('swb1', 'SWB1'),
      `${token}.`, `${token}.AAAA`, `.${token}`, ` ${token}`, `${token} `, `${token}\n`, `${token}=`,
      `swb1.${kid}.${iv}.${tag}`, `swb1.${kid}.${iv}..${tag}`, `swb1.${kid}.${iv}.${body}.${tag}A`, `swb1.${kid}A.${iv}.${body}.${tag}`,
      `swb1.${kid}.${iv}.${body!.replace(/^./, '+')}.${tag}`, `swb1.${kid}.${iv}.${body}.${tag!.slice(0, 21)}=`, token.replace(/\./g, '%2E'),
      'swb1.' + 'A'.repeat(70_000), `swb1.${kid}.${iv}.${'ü'.repeat(40)}.${tag}`, '\u0000'.repeat(64),
    ];
    for (const c of cases) refused(s, c, 'malformed');
  });

  it('every truncation of a token is malformed', () => {
    const s = sealer();
    const token = s.seal(input());
    for (let n = 0; n < token.length; n++) refused(s, token.slice(0, n), 'malformed');
  });

  it('an authentic state of a shape this version never wrote is malformed (not a crash)', () => {
    const key = deriveKey(KEY);
    const forge = (plain: string) => {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key.aes, iv, { authTagLength: 16 });
      c.setAAD(Buffer.concat([Buffer.from('swb1.'), key.id]));
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return ['swb1', ...[key.id, iv, body, c.getAuthTag()].map((b) => b.toString('base64url'))].join('.');
    };
    const s = sealer();
    for (const plain of ['not json', '{}', '[]', 'null', JSON.stringify(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'soon', 1, 'i']), JSON.stringify(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 1.5, 2, 'i'])]) {
      refused(s, forge(plain), 'malformed');
    }
  });
});

describe('RequestStateSealer: single use', () => {
  it('redeem accepts a state once; the second time is replayed', async () => {
    const s = sealer();
    const token = s.seal(input());
    assert.equal((await s.redeem(token, expectation())).continuationId, 'cont-1');
    await assert.rejects(s.redeem(token, expectation()), (err: unknown) => err instanceof RequestStateError && err.reason === 'replayed');
    // open() alone still verifies it: single use is the record's job, not the seal's.
    assert.ok(s.open(token, expectation()));
  });

  it('a refused retry does not use the state up; each round of one continuation is its own state', async () => {
    const s = sealer();
    const round1 = s.seal(input());
    await assert.rejects(s.redeem(round1, expectation({ target: 'other' })), (err: unknown) => err instanceof RequestStateError && err.reason === 'wrong-request');
    await assert.rejects(s.redeem(round1, expectation({ principal: { ...principal, tenant: 't' } })), (err: unknown) => err instanceof RequestStateError && err.reason === 'wrong-principal');
    await s.redeem(round1, expectation());
    const round2 = s.seal(input());
    assert.equal((await s.redeem(round2, expectation())).continuationId, 'cont-1');
    await assert.rejects(s.redeem(round1, expectation()), (err: unknown) => err instanceof RequestStateError && err.reason === 'replayed');
  });

  it('an expired state is refused as expired before the record is asked', async () => {
    let asked = 0;
    const s = new RequestStateSealer({ keys: { current: KEY, previous: [] }, ttlMs: TTL, now, used: { claim: async () => (asked++, true), claimed: async () => false } });
    const token = s.seal(input());
    clock += TTL;
    await assert.rejects(s.redeem(token, expectation()), (err: unknown) => err instanceof RequestStateError && err.reason === 'expired');
    assert.equal(asked, 0);
  });
});

describe('RequestStateError on the wire', () => {
  it('is -32602 (HTTP 400) with the reason and nothing of the state in the message or data', () => {
    const s = sealer();
    const token = s.seal(input());
    for (const [reason, attempt] of [
      ['malformed', () => s.open('x', expectation())],
      ['tampered', () => sealer(OTHER).open(token, expectation())],
      ['wrong-principal', () => s.open(token, expectation({ principal: { ...principal, subject: 'mallory' } }))],
      ['wrong-request', () => s.open(token, expectation({ target: 'other' }))],
    ] as const) {
      let caught: unknown;
      try {
        attempt();
      } catch (err) {
        caught = err;
      }
      assert.ok(caught instanceof RequestStateError);
      assert.equal(caught.status, 400);
      const wire = toJsonRpcError(caught).toObject();
      assert.equal(wire.code, -32602);
      assert.deepEqual(wire.data, { code: 'SWB_REQUEST_STATE_INVALID', reason });
      for (const secret of [token, 'alice', 'mallory', 'acme', 'github__create_issue', 'cont-1', 'replica-a', KEY]) assert.ok(!wire.message.includes(secret), `${reason}: ${secret}`);
      assert.match(wire.message, /requestState/);
    }
  });
});

describe('digestParams', () => {
  it('is SHA-256 (base64url) of canonical JSON: sorted keys at every depth, no whitespace', () => {
    const expected = createHash('sha256').update('{"a":[{"c":"é","d":2}],"b":1}').digest('base64url');
    assert.equal(digestParams({ b: 1, a: [{ d: 2, c: 'é' }] }), expected);
  });

  it('ignores _meta, inputResponses and requestState at the top level only', () => {
    const base = digestParams({ name: 't', arguments: { x: 1 } });
    assert.equal(digestParams({ name: 't', arguments: { x: 1 }, _meta: { progressToken: 1 }, inputResponses: { a: {} }, requestState: 'swb1.x' }), base);
    assert.notEqual(digestParams({ name: 't', arguments: { x: 1, _meta: {} } }), base);
    assert.notEqual(digestParams({ name: 't', arguments: { x: 1, requestState: 's' } }), base);
  });

  it('ignores key order, not array order, values or types', () => {
    const a = digestParams(JSON.parse('{"name":"t","arguments":{"p":{"y":[1,2],"x":"1"},"q":null}}'));
    assert.equal(digestParams(JSON.parse('{"arguments":{"q":null,"p":{"x":"1","y":[1,2]}},"name":"t"}')), a);
    assert.notEqual(digestParams(JSON.parse('{"name":"t","arguments":{"p":{"y":[2,1],"x":"1"},"q":null}}')), a);
    assert.notEqual(digestParams(JSON.parse('{"name":"t","arguments":{"p":{"y":[1,2],"x":1},"q":null}}')), a);
    assert.notEqual(digestParams(JSON.parse('{"name":"t","arguments":{"p":{"y":[1,2],"x":"1"}}}')), a);
  });

  it('counts a "__proto__" key like any other; absent params are empty params', () => {
    const withProto = JSON.parse('{"name":"t","arguments":{"__proto__":{"admin":true}}}');
    assert.notEqual(digestParams(withProto), digestParams({ name: 't', arguments: {} }));
    assert.notEqual(digestParams(JSON.parse('{"name":"t","__proto__":1}')), digestParams({ name: 't' }));
    assert.equal(digestParams(undefined), digestParams({}));
    assert.equal(digestParams({ _meta: {} }), digestParams({}));
  });
});

describe('resolveRequestStateKeys', () => {
  function recorder() {
    const lines: Array<{ level: string; text: string }> = [];
    const log = (level: string) => (...args: unknown[]) => void lines.push({ level, text: JSON.stringify(args) });
    return { lines, logger: { warn: log('warn'), info: log('info') } as never };
  }
  const modern = (over: object = {}) => ({ requestStatePreviousKeys: [], continuationTtlMs: TTL, continuationsPerPrincipal: 16, listenUrisMax: 100, listensPerPrincipal: 64, ...over });

  it('returns the configured keys and logs nothing', () => {
    const { lines, logger } = recorder();
    const keys = resolveRequestStateKeys({ modern: modern({ requestStateKey: KEY, requestStatePreviousKeys: [OTHER] }), store: {} }, logger);
    assert.deepEqual(keys, { current: KEY, previous: [OTHER] });
    assert.deepEqual(lines, []);
  });

  it('without a key: a random one per call, a warning when replicas share Redis (info otherwise), never the key in the log', () => {
    const { lines, logger } = recorder();
    const redis = { url: 'redis://x', keyPrefix: 'swb:', sessionTtlMs: 1, heartbeatMs: 1, replicaTtlMs: 1, forwardTimeoutMs: 1 };
    const a = resolveRequestStateKeys({ modern: modern(), store: { redis } }, logger);
    const b = resolveRequestStateKeys({ modern: modern(), store: {} }, logger);
    assert.notEqual(a.current, b.current);
    assert.equal(Buffer.from(a.current, 'base64url').length, 32);
    assert.deepEqual(a.previous, []);
    assert.deepEqual(lines.map((l) => l.level), ['warn', 'info']);
    assert.match(lines[0]!.text, /replicas will not accept each other's requestState/);
    for (const l of lines) assert.ok(!l.text.includes(a.current) && !l.text.includes(b.current));
    // The generated key works.
    assert.ok(sealer(a.current).open(sealer(a.current).seal(input()), expectation()));
  });
});
