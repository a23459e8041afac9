import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { describe, it } from 'node:test';
import { advertiseUrl } from '../../../src/cluster/advertise-url.js';

describe('advertiseUrl', () => {
  it('is the configured URL when there is one (without a trailing slash)', () => {
    assert.equal(advertiseUrl('https://gw-0.gw:8443/', '0.0.0.0', 8080, { POD_IP: '10.0.0.9' }), 'https://gw-0.gw:8443');
  });

  it('else POD_IP with the bound port', () => {
    assert.equal(advertiseUrl(undefined, '0.0.0.0', 8080, { POD_IP: '10.1.2.3' }), 'http://10.1.2.3:8080');
    assert.equal(advertiseUrl(undefined, '0.0.0.0', 8080, { POD_IP: 'fd00::7' }), 'http://[fd00::7]:8080');
  });

  it('else the listen host when it is one concrete address', () => {
    assert.equal(advertiseUrl(undefined, '127.0.0.1', 41234, {}), 'http://127.0.0.1:41234');
    assert.equal(advertiseUrl(undefined, '192.168.1.5', 80, {}), 'http://192.168.1.5:80');
  });

  it('else, on a wildcard, the first non-internal IPv4 of this machine, or loopback', () => {
    const external = Object.values(networkInterfaces())
      .flatMap((l) => l ?? [])
      .find((a) => a.family === 'IPv4' && !a.internal)?.address;
    for (const wildcard of ['0.0.0.0', '::']) assert.equal(advertiseUrl(undefined, wildcard, 8080, {}), `http://${external ?? '127.0.0.1'}:8080`);
  });
});
