// Why the gateway holds no token to exchange, as the no_subject_token refusal tells it. One message for every
// case told a 2025 session whose token simply expired that it was verified before a configuration reload, and
// one whose token was never kept (verified before that reload) to get a fresh token. The token here is a JWT
// the store decodes (it verifies none: the edge did); its claims are what it reads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import { noSubjectToken, SubjectTokens } from '../../../src/upstream/subject-tokens.js';

const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const jwt = (exp: number) => `${part({ alg: 'RS256' })}.${part({ sub: 'alice', exp })}.c2ln`;
const user = (principal: object, sharedByTokens = false) => ({ issuer: 'https://issuer.test', subject: 'alice', tenant: 'acme', session: { id: 's1', principal, sharedByTokens } });

describe('no_subject_token: why no token is there to exchange', () => {
  it('tells an expired token from one never kept and from a standing several tokens share', () => {
    const tokens = new SubjectTokens();
    const expired = {};
    tokens.remember(expired, `Bearer ${jwt(Math.floor(Date.now() / 1000) - 60)}`);
    assert.equal(tokens.current(user(expired)), undefined);
    assert.equal(tokens.missing(user(expired)), 'expired');
    // Dropped at its expiry, it is still told as expired (an instance's restart asks again).
    assert.equal(tokens.current(user(expired)), undefined);
    assert.equal(tokens.missing(user(expired)), 'expired');
    assert.equal(tokens.missing(user({})), 'unkept');
    assert.equal(tokens.missing(user({}, true)), 'shared');
    // A fresh token for that principal is exchanged again.
    const fresh = jwt(Math.floor(Date.now() / 1000) + 600);
    tokens.remember(expired, `Bearer ${fresh}`);
    assert.equal(tokens.current(user(expired)), fresh);
  });

  it('says for each case what to send, and names a reload only where one is the cause', () => {
    const said = (why: 'shared' | 'expired' | 'unkept') => {
      const e = noSubjectToken('tickets', why);
      assert.ok(e instanceof GatewayError && e.code === 'SWB_UPSTREAM_CREDENTIAL_REFUSED');
      assert.deepEqual(e.details, { upstream: 'tickets', reason: 'no_subject_token', awaitsConsent: true });
      assert.match(e.message, /upstream "tickets"/);
      assert.match(e.message, /send the request again/);
      return e.message;
    };
    const expired = said('expired');
    assert.match(expired, /has expired/);
    assert.match(expired, /with a fresh token/);
    assert.doesNotMatch(expired, /reload/);
    const unkept = said('unkept');
    assert.match(unkept, /verified before a configuration reload/);
    assert.doesNotMatch(unkept, /expired|fresh token/);
    const shared = said('shared');
    assert.match(shared, /several of your tokens share/);
    assert.doesNotMatch(shared, /expired|fresh token/);
  });
});
