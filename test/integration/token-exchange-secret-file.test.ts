// A per-user upstream whose token-exchange client secret file cannot be read yet (a Secret mounted late,
// a path fixed by the operator): a user's instance then fails to build its link at all. That must be a
// failed start like any other, said to the user with its reason and retried with the backoff, so that
// once the file is there the user is served, not a link that waits "starting" for ever.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startExchangeRig, type ExchangeRig } from '../helpers/exchange-rig.js';
import { mcpRequest, openSession, signToken } from '../helpers/tokens.js';

const CLIENT_SECRET = 'gateway-client-secret-from-a-file';

describe('token exchange with a client secret file that appears after the gateway started', () => {
  let rig: ExchangeRig;
  const dir = mkdtempSync(join(tmpdir(), 'swb-late-secret-'));
  const secretFile = join(dir, 'client-secret');

  before(async () => {
    rig = await startExchangeRig({
      clientSecret: CLIENT_SECRET,
      upstream: { restart: { initialDelayMs: 50, maxDelayMs: 200 } },
      exchange: { clientSecretFile: secretFile, scope: 'tickets' },
    });
  });

  after(async () => {
    await rig?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the user hears why, and is served once the file can be read', async () => {
    const token = await signToken(rig.key, { sub: 'alice', expIn: 600 });
    const sid = await openSession(rig.gw, token);
    const call = (id: number) => mcpRequest(rig.gw, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami', arguments: { claimed: 'alice' } } }, { token, sid });

    const first = await call(2);
    const err = first.json?.error;
    assert.ok(err, `an error while the file is missing: ${first.text}`);
    assert.match(err.message, /clientSecretFile cannot be read \(ENOENT\)/, `the reason, not "starting": ${err.message}`);
    assert.ok(!err.message.includes(dir), 'the host path stays in the log');

    writeFileSync(secretFile, `${CLIENT_SECRET}\n`);
    let served: string | undefined;
    let last = '';
    for (let i = 0; i < 60 && served === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const r = await call(10 + i);
      last = r.text;
      served = r.json?.result?.content?.[0]?.text;
    }
    assert.equal(served, 'alice', `served as alice within 6 s of the file appearing; last answer: ${last}`);
  });
});
