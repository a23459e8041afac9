// admin.token as operators write it. The header was read as RFC 6750's narrowest form (letters, digits
// and -._~+/ only), so a token with any other character a header carries (a password manager's "!#%*:@",
// a passphrase with spaces) could never be sent: every request was refused 401 "an Authorization: Bearer
// token is required", the token the operator had configured in hand. And a token given as ${ENV} from a
// Secret written with a trailing newline (echo TOKEN | base64) kept it, which no header can carry: 401
// "not valid" for the right token. A token file's is trimmed; admin.token's now too, and any header
// value is compared. Real gateway, real admin listener.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';

const forms: Array<[string, string, string]> = [
  ['symbols a password manager puts in', 'Xq7!#%*:@;<>?[]^`{|}~"\'(),$&=Zr9-long-enough-0123', 'Xq7!#%*:@;<>?[]^`{|}~"\'(),$&=Zr9-long-enough-0123'],
  ['a passphrase with spaces', 'correct horse battery staple and more words', 'correct horse battery staple and more words'],
  ['a trailing newline from its Secret', 'admin-token-with-a-newline-0123456789-abcdef\n', 'admin-token-with-a-newline-0123456789-abcdef'],
];

describe('admin.token in the forms operators write it', () => {
  for (const [what, configured, sent] of forms) {
    it(`accepts a token with ${what}, and still refuses another`, async () => {
      const gw = await startGateway({
        admin: { enabled: true, port: 0, token: configured },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      });
      try {
        const get = (token: string) => fetch(new URL('/sessions', gw.app.adminUrl!), { headers: { authorization: `Bearer ${token}` } });
        const ok = await get(sent);
        assert.equal(ok.status, 200, await ok.text());
        assert.equal((await get(`${sent}x`)).status, 401);
        assert.equal((await get(sent.slice(0, -1))).status, 401);
      } finally {
        await gw.close();
      }
    });
  }
});
