// The two suites on the OAuth mix-up attack (RFC 9700 §4.4) stand on the same parts: an honest
// authorization server and its upstream, a malicious server ("evil") fronting another user-oauth upstream,
// and a consent gateway serving the first at /mcp and the second at /evil.
import { startConsentGateway } from './consent-gateway.js';
import { startConsentServer, type ConsentServer } from './consent-server.js';
import type { RunningGateway } from './gateway.js';
import { startIdentityUpstream } from './identity-upstream.js';

const AUDIENCE = 'https://tickets.test';

export interface MixUpRig {
  honest: ConsentServer;
  evil: ConsentServer;
  gw: RunningGateway;
  /** Alice's token for the gateway. */
  token: string;
  close(): Promise<void>;
}

/** `issInRedirect`: whether the honest server names itself in its answers (RFC 9207 `iss`). */
export async function startMixUpRig(o: { issInRedirect: boolean }): Promise<MixUpRig> {
  const honest = await startConsentServer({ audience: AUDIENCE, issInRedirect: o.issInRedirect });
  const evil = await startConsentServer({ audience: AUDIENCE });
  const upstream = await startIdentityUpstream({ issuer: honest.issuer, audience: AUDIENCE, keys: honest.keys, authorizationServer: honest.issuer });
  const closeParts = async () => {
    await upstream.close();
    await honest.close();
    await evil.close();
  };
  try {
    const rig = await startConsentGateway([
      { name: 'tickets', path: '/mcp', url: upstream.url, authorizationServer: honest.issuer },
      { name: 'evil', path: '/evil', url: upstream.url.replace('/mcp', '/evil'), authorizationServer: evil.issuer },
    ]);
    return { honest, evil, gw: rig.gw, token: rig.token, close: async () => (await rig.close(), await closeParts()) };
  } catch (e) {
    await closeParts();
    throw e;
  }
}
