import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkHostAndOrigin, hostnameOf, type GuardOptions } from '../../../src/edge/request-guard.js';
import { isLoopbackHost } from '../../../src/config/loopback.js';

const loopback: GuardOptions = { boundToLoopback: true, allowedOrigins: [], allowedHosts: [] };
const open: GuardOptions = { boundToLoopback: false, allowedOrigins: [], allowedHosts: [] };

describe('hostnameOf / isLoopbackHost', () => {
  it('strips ports and lowercases', () => {
    assert.equal(hostnameOf('example.com:8080'), 'example.com');
    assert.equal(hostnameOf('Example.COM'), 'example.com');
    assert.equal(hostnameOf('[::1]:80'), '[::1]');
    assert.equal(hostnameOf('[::1]'), '[::1]');
    assert.equal(hostnameOf('127.0.0.1:3000'), '127.0.0.1');
  });

  it('knows loopback names', () => {
    for (const h of ['localhost', '127.0.0.1', '127.1.2.3', '[::1]', '::1']) assert.equal(isLoopbackHost(h), true, h);
    for (const h of ['example.com', '127.evil.com', '10.0.0.1', '0.0.0.0', 'localhost.evil.com', '128.0.0.1']) assert.equal(isLoopbackHost(h), false, h);
  });
});

describe('checkHostAndOrigin', () => {
  const cases: Array<[string, GuardOptions, string | undefined, string | undefined, string | undefined]> = [
    // name, options, Host, Origin, expected refusal
    ['loopback: localhost with port', loopback, 'localhost:8080', undefined, undefined],
    ['loopback: 127.0.0.1', loopback, '127.0.0.1:8080', undefined, undefined],
    ['loopback: [::1]', loopback, '[::1]:8080', undefined, undefined],
    ['loopback: uppercase LOCALHOST', loopback, 'LOCALHOST:8080', undefined, undefined],
    ['loopback: rebinding host refused', loopback, 'evil.example:8080', undefined, 'Host "evil.example:8080" is not allowed'],
    ['loopback: missing Host refused', loopback, undefined, undefined, 'missing Host header'],
    ['loopback: empty Host refused', loopback, '', undefined, 'missing Host header'],
    ['loopback: loopback Origin allowed (Inspector)', loopback, 'localhost:8080', 'http://localhost:6274', undefined],
    ['loopback: 127.0.0.1 Origin allowed', loopback, 'localhost:8080', 'http://127.0.0.1:6274', undefined],
    ['loopback: [::1] Origin allowed', loopback, 'localhost:8080', 'http://[::1]:6274', undefined],
    ['loopback: foreign Origin refused', loopback, 'localhost:8080', 'https://evil.example', 'Origin "https://evil.example" is not allowed'],
    ['loopback: Origin "null" refused', loopback, 'localhost:8080', 'null', 'Origin "null" is not allowed'],
    ['loopback: Host that only starts like an IP refused', loopback, '127.0.0.1.evil.example', undefined, 'Host "127.0.0.1.evil.example" is not allowed'],
    ['loopback: localhost subdomain Origin refused', loopback, 'localhost', 'http://localhost.evil.example', 'Origin "http://localhost.evil.example" is not allowed'],
    ['open: any Host', open, 'api.example.com', undefined, undefined],
    ['open: no Host', open, undefined, undefined, undefined],
    ['open: any Origin refused without allowedOrigins', open, 'api.example.com', 'https://app.example.com', 'Origin "https://app.example.com" is not allowed'],
    ['open: loopback Origin refused when not bound to loopback', open, 'api.example.com', 'http://localhost:3000', 'Origin "http://localhost:3000" is not allowed'],
    ['open: listed Origin allowed', { ...open, allowedOrigins: ['https://app.example.com'] }, 'x', 'https://app.example.com', undefined],
    ['open: unlisted Origin refused', { ...open, allowedOrigins: ['https://app.example.com'] }, 'x', 'https://other.example.com', 'Origin "https://other.example.com" is not allowed'],
    ['open: wildcard Origin', { ...open, allowedOrigins: ['*'] }, 'x', 'https://anything.example', undefined],
    ['loopback + allowedOrigins: loopback Origin no longer implied', { ...loopback, allowedOrigins: ['https://app.example.com'] }, 'localhost', 'http://localhost:3000', 'Origin "http://localhost:3000" is not allowed'],
    ['loopback + allowedOrigins: listed Origin', { ...loopback, allowedOrigins: ['https://app.example.com'] }, 'localhost', 'https://app.example.com', undefined],
    ['allowedHosts: listed name with port', { ...open, allowedHosts: ['mcp.example.com'] }, 'mcp.example.com:443', undefined, undefined],
    ['allowedHosts: listed name, uppercase Host', { ...open, allowedHosts: ['mcp.example.com'] }, 'MCP.Example.com', undefined, undefined],
    ['allowedHosts: listed host:port exactly', { ...open, allowedHosts: ['mcp.example.com:8443'] }, 'mcp.example.com:8443', undefined, undefined],
    ['allowedHosts: listed host:port, Host in capitals (names are case-insensitive)', { ...open, allowedHosts: ['mcp.example.com:8443'] }, 'MCP.Example.com:8443', undefined, undefined],
    ['allowedHosts: unlisted Host', { ...open, allowedHosts: ['mcp.example.com'] }, 'evil.example', undefined, 'Host "evil.example" is not allowed'],
    ['allowedHosts: missing Host', { ...open, allowedHosts: ['mcp.example.com'] }, undefined, undefined, 'missing Host header'],
    ['allowedHosts replaces the loopback default', { ...loopback, allowedHosts: ['mcp.example.com'] }, 'localhost:8080', undefined, 'Host "localhost:8080" is not allowed'],
    ['Host refusal wins over a good Origin', { ...loopback, allowedOrigins: ['*'] }, 'evil.example', 'https://x.example', 'Host "evil.example" is not allowed'],
  ];

  for (const [name, options, host, origin, expected] of cases) {
    it(name, () => {
      assert.equal(checkHostAndOrigin(options, host, origin), expected);
    });
  }
});
