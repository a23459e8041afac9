// auth.jwksCooldownMs 0 (or a few ms) is accepted (tests and a local issuer use it to see a rotation or an
// outage at once), but in front of clients it lets anyone make the gateway hammer the identity provider:
// every token naming an unknown kid, forged ones included, is a JWKS fetch. check-config (and serve, at
// start) said nothing; now it warns below 1000 ms, as it does for other valid settings that will not work as
// meant. The CLI as a real child process.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli, tempConfig } from '../helpers/cli.js';

const config = (cooldown: number) =>
  tempConfig(`server: { host: 127.0.0.1, publicUrl: https://gw.example }
auth: { mode: jwt, issuer: https://issuer.example, jwksUrl: https://issuer.example/jwks.json, jwksCooldownMs: ${cooldown} }
tenants: [{ name: acme, endpoints: [/mcp] }]
upstreams: [{ name: a, transport: stdio, command: node }]
endpoints: [{ path: /mcp, upstreams: [a] }]
`);

describe('check-config: auth.jwksCooldownMs below a second', () => {
  it('warns for 0 and for 999, naming the risk and the floor', () => {
    for (const cooldown of [0, 999]) {
      const r = runCli(['check-config', config(cooldown)]);
      assert.equal(r.status, 0, r.stderr);
      const out = `${r.stdout}${r.stderr}`;
      assert.match(out, new RegExp(`auth\\.jwksCooldownMs: ${cooldown} ms.*unknown kid.*identity provider.*at least 1000`), out);
    }
  });

  it('says nothing at 1000 ms or with no jwksUrl', () => {
    const r = runCli(['check-config', config(1000)]);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(`${r.stdout}${r.stderr}`, /jwksCooldownMs/);
  });
});
