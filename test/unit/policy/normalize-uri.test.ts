import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeUri, removeDotSegments, templateProblem, uriProblem } from '../../../src/policy/normalize-uri.js';
import { TenantPolicy } from '../../../src/policy/tenant-policy.js';
import type { TenantConfig } from '../../../src/config/schema.js';

describe('normalizeUri (RFC 3986 §6.2.2)', () => {
  it('decodes percent-encoded unreserved characters, in any hex case', () => {
    assert.equal(normalizeUri('evil://files/%2e%2E/%73ecret/b'), 'evil://files/secret/b');
    assert.equal(normalizeUri('evil://files/%7e%41%7A%30%2D%5F'), 'evil://files/~Az0-_');
  });

  it('never decodes reserved or other characters; their escapes get upper-case hex', () => {
    assert.equal(normalizeUri('evil://files/a%2fb%2F%3a%20%25'), 'evil://files/a%2Fb%2F%3A%20%25');
    // "%2F" is data inside a segment, not a separator: "..%2F" is not a dot-segment.
    assert.equal(normalizeUri('evil://files/a/..%2Fsecret'), 'evil://files/a/..%2Fsecret');
  });

  it('resolves dot-segments (§5.2.4), never above the root', () => {
    assert.equal(removeDotSegments('/a/b/c/./../../g'), '/a/g');
    assert.equal(removeDotSegments('mid/content=5/../6'), 'mid/6');
    assert.equal(removeDotSegments('/a/b/..'), '/a/');
    assert.equal(normalizeUri('evil://files/../../../etc/passwd'), 'evil://files/etc/passwd');
    assert.equal(normalizeUri('file:///srv/public/%2e%2e/%2e%2e/secret'), 'file:///secret');
    assert.equal(normalizeUri('evil://files/a/./b/.'), 'evil://files/a/b/');
  });

  it('lower-cases the scheme and the host, not the user, port or path', () => {
    assert.equal(normalizeUri('EVIL://Bob@Files.Example:8080/Secret'), 'evil://Bob@files.example:8080/Secret');
    assert.equal(normalizeUri('HTTP://[::AB]:80/X'), 'http://[::ab]/X', 'the default port goes too');
    assert.equal(normalizeUri('HTTP://[::AB]:8080/X'), 'http://[::ab]:8080/X');
  });

  it('decodes in query and fragment, but leaves their dots alone', () => {
    assert.equal(normalizeUri('evil://files/a?p=../%73ecret#%2e%2e/x'), 'evil://files/a?p=../secret#../x');
    assert.equal(normalizeUri('evil://files/a/../b?x=/../y'), 'evil://files/b?x=/../y');
  });

  it('leaves a URI already in normal form, and malformed escapes, unchanged', () => {
    for (const u of ['test://static-text', 'test://template/{id}/data', 'file:///home/me/My%20File.txt', 'urn:isbn:0451450523', 'evil://files/100%', 'evil://files/%zz']) {
      assert.equal(normalizeUri(u), u);
    }
  });
});

describe('uriProblem', () => {
  it('a URI that normalises to something else is not-normal', () => {
    for (const u of ['evil://files/%2e%2e/%73ecret/b', 'evil://files/%2e%2e/x', 'Evil://files/x', 'evil://FILES/x', 'evil://files/a%2fb', 'evil://files/a/../b', 'evil://files/x?q=%41']) {
      assert.equal(uriProblem(u), 'not-normal', u);
    }
  });

  it('a normal URI hiding a dot-segment behind an encoded or back slash, or a NUL, is ambiguous', () => {
    for (const u of ['evil://files/public/..%2F..%2Fsecret', 'evil://files/public/..%5Csecret', 'file:///public\\..\\secret', 'evil://files/secret%00.txt']) {
      assert.equal(uriProblem(u), 'ambiguous', u);
    }
  });

  it('ordinary URIs have no problem', () => {
    for (const u of ['test://static-text', 'test://template/{id}/data', 'file:///a/b.c/..d/e..', 'evil://files/x?q=../y', 'urn:x:..', 'https://api.example:8443/x', 'file:///etc/passwd', 'mail://inbox?unread=1']) {
      assert.equal(uriProblem(u), undefined, u);
    }
  });
});

describe('spellings a URL parser or a server reads as another resource (found by a review)', () => {
  it('are refused: not normal (empty query, default port, IDNA host, file: localhost or without //) or ambiguous', () => {
    const notNormal = ['file:///etc/shadow?', 'file://localhost/etc/shadow', 'file:/home/u/.ssh/id_rsa', 'https://api.example:443/admin/x', 'http://api.example:80/x', 'https://\uff41\uff50\uff49.example/admin/x', 'https://API.example/x'];
    for (const u of notNormal) assert.equal(uriProblem(u), 'not-normal', u);
    const ambiguous = ['file:///etc/shadow#/../x', 'file:///etc//shadow', 'file:////home/u/.ssh/id_rsa', 'https://api.example/admin%2Fx', 'evil://files/a%2Fb', 'evil://files/a%5Cb'];
    for (const u of ambiguous) assert.equal(uriProblem(u), 'ambiguous', u);
  });

  it('a port with leading zeros and an IPv6 host not in its canonical form are not normal (found by a review)', () => {
    // A URL parser reads each as the right-hand spelling: a deny of that spelling did not see them.
    const same: Array<[string, string]> = [
      ['https://api.example:0443/admin/x', 'https://api.example/admin/x'],
      ['http://api.example:00080/x', 'http://api.example/x'],
      ['https://internal.example:08443/x', 'https://internal.example:8443/x'],
      ['http://[0:0:0:0:0:0:0:1]/admin', 'http://[::1]/admin'],
      ['http://[::FFFF:127.0.0.1]:8080/admin', 'http://[::ffff:7f00:1]:8080/admin'],
      ['evil://[0::1]:007/x', 'evil://[::1]:7/x'],
    ];
    for (const [u, normal] of same) {
      assert.equal(normalizeUri(u), normal, u);
      assert.equal(uriProblem(u), 'not-normal', u);
      assert.equal(uriProblem(normal), undefined, normal);
    }
    // A port of zero, a template's placeholder and a bracketed host that is no IPv6 address stay as written.
    for (const u of ['evil://h:0/x', 'http://h:{port}/x', 'evil://[v1.x]/y']) assert.equal(normalizeUri(u), u, u);
    const tenant = new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: [], deny: [] }, resources: { allow: ['http*'], deny: ['https://internal.example:8443/*', 'http://[::1]/*'] }, prompts: { allow: [], deny: [] }, limits: {}, arguments: [], confirm: [] } as TenantConfig);
    for (const u of ['https://internal.example:08443/admin', 'http://[0:0:0:0:0:0:0:1]/admin']) assert.equal(tenant.decide('resource', u, new Set()).allowed, false, u);
  });
});

describe('what a URL parser strips or supplies (found by a review)', () => {
  it('tabs and newlines anywhere, controls and spaces around, the "//" of a special scheme, the "/" of file: are not normal', () => {
    // A URL parser (WHATWG, as servers built on Node, browsers' fetch) reads each as the right-hand spelling.
    const same: Array<[string, string]> = [
      ['https:internal.example/admin', 'https://internal.example/admin'],
      ['https:/internal.example/admin', 'https://internal.example/admin'],
      ['https:///internal.example/admin', 'https://internal.example/admin'],
      ['WS:h/x', 'ws://h/x'],
      ['https://internal.example/ad\tmin', 'https://internal.example/admin'],
      ['https://internal.example/ad\nmin?q=\r1', 'https://internal.example/admin?q=1'],
      ['ht\ttps://internal.example/admin', 'https://internal.example/admin'],
      [' https://internal.example/admin\u0000', 'https://internal.example/admin'],
      ['file:etc/passwd', 'file:///etc/passwd'],
      ['https://@internal.example/admin', 'https://internal.example/admin'],
      ['https://:@internal.example/admin', 'https://internal.example/admin'],
      ['https://u:@internal.example/admin', 'https://u@internal.example/admin'],
      ['evil://files/se\tcret', 'evil://files/secret'],
      // An empty path is "/" to a parser: before, these passed a deny of "https://internal.example/*".
      ['https://internal.example', 'https://internal.example/'],
      ['https://internal.example?token=x', 'https://internal.example/?token=x'],
      ['HTTPS://internal.example:443', 'https://internal.example/'],
      ['file://server?x', 'file://server/?x'],
    ];
    for (const [u, normal] of same) {
      assert.equal(normalizeUri(u), normal, JSON.stringify(u));
      assert.equal(uriProblem(u), 'not-normal', JSON.stringify(u));
    }
    // Schemes a parser gives no authority of its own keep their form: a URN, a mail query, an opaque path.
    for (const u of ['urn:isbn:0451450523', 'mailto:a@b.example', 'evil:files/x', 'evil://files', 'https://h/']) assert.equal(uriProblem(u), undefined, u);
    const tenant = new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: [], deny: [] }, resources: { allow: ['*'], deny: ['https://internal.example/*', 'file:///etc/*'] }, prompts: { allow: [], deny: [] }, limits: {}, arguments: [], confirm: [] } as TenantConfig);
    for (const u of ['https://internal.example?token=x', 'https://internal.example', 'https:internal.example/admin', 'https://@internal.example/admin', 'https://internal.example/ad\tmin', ' https://internal.example/admin', 'file:etc/passwd']) assert.equal(tenant.decide('resource', u, new Set()).allowed, false, JSON.stringify(u));
  });
});

describe('a host with a trailing dot, a Windows drive written with "|" (found by a review)', () => {
  it('are refused: the same host to DNS, the same file to a URL parser', () => {
    for (const u of ['https://internal.example./admin', 'http://u@internal.example.:8080/x', 'file://server./share/x']) assert.equal(uriProblem(u), 'ambiguous', u);
    assert.equal(normalizeUri('file:///c|/secret/x'), 'file:///c:/secret/x');
    assert.equal(uriProblem('file:///C|/secret/x'), 'not-normal');
    // Neither is touched elsewhere: a dot ending a path, a "|" in a path that is no drive, a custom scheme's authority.
    for (const u of ['https://h/x.', 'file:///srv/a|b', 'evil://files./x']) assert.equal(uriProblem(u), undefined, u);
    const tenant = new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: [], deny: [] }, resources: { allow: ['*'], deny: ['https://internal.example/*', 'file:///c:/secret/*'] }, prompts: { allow: [], deny: [] }, limits: {}, arguments: [], confirm: [] } as TenantConfig);
    for (const u of ['https://internal.example./admin', 'file:///c|/secret/x']) assert.equal(tenant.decide('resource', u, new Set()).allowed, false, u);
  });
});

describe('user information in an http(s) or ws(s) URI (found by a review)', () => {
  it('is refused: the server reads the host after it, the rules the whole text', () => {
    // Before: normal, and past a deny of "https://internal.example/*" (a server fetching it reaches that host).
    for (const u of ['https://x@internal.example/admin', 'http://u:p@internal.example/x', 'wss://a@internal.example/s', 'https://docs.example@evil.example/x']) assert.equal(uriProblem(u), 'ambiguous', u);
    // Schemes whose URIs name users keep them: connection strings, ftp, mail.
    for (const u of ['postgres://app:pw@db/orders', 'ftp://anon@ftp.example/pub/x', 'mailto:a@b.example', 'https://internal.example/users/@me']) assert.equal(uriProblem(u), undefined, u);
    const tenant = new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: [], deny: [] }, resources: { allow: ['*'], deny: ['https://internal.example/*'] }, prompts: { allow: [], deny: [] }, limits: {}, arguments: [], confirm: [] } as TenantConfig);
    assert.equal(tenant.decide('resource', 'https://x@internal.example/admin', new Set()).allowed, false);
  });
});

describe('templateProblem', () => {
  it('holds what is written around the expressions to normal form, not the expressions (found by a review)', () => {
    for (const t of ['users://{userId}/profile', 'db://{Table}/rows{?limit,offset}', 'file:///{+path}', 'note:{#section}', 'https://{Host}/x', 'https://{host}{/path*}']) assert.equal(templateProblem(t), undefined, t);
    for (const t of ['Users://{userId}/profile', 'file:///a/../{path}', 'https://h:443/{x}', 'https:h/{x}']) assert.equal(templateProblem(t), 'not-normal', t);
    assert.equal(templateProblem('file:///{a}%2F{b}'), 'ambiguous');
  });
});

describe('TenantPolicy resource decisions', () => {
  const tenant = new TenantPolicy({
    name: 't',
    endpoints: ['*'],
    tools: { allow: ['*'], deny: [] },
    resources: { allow: ['evil://files/*'], deny: ['*secret*'] },
    prompts: { allow: ['*'], deny: [] },
    limits: {},
    arguments: [],
    confirm: [],
  } as TenantConfig);
  const decide = (uri: string) => tenant.decide('resource', uri, new Set());

  it('the percent-encoding bypass is refused before any pattern is consulted', () => {
    assert.equal(decide('evil://files/public/b').allowed, true);
    assert.deepEqual(decide('evil://files/secret/b'), { allowed: false, rule: 'resources.deny:*secret*', reason: 'deny_rule' });
    assert.deepEqual(decide('evil://files/%2e%2e/%73ecret/b'), { allowed: false, rule: 'resources: URI not in normal form', reason: 'not_allowed' });
    assert.equal(decide('evil://files/public/..%2F%2e%2e%2Fx').allowed, false);
    assert.deepEqual(decide('evil://files/public/..%2F..%2Fx'), { allowed: false, rule: 'resources: URI a server may read as another (an escaped separator, a backslash, an empty segment, a NUL, a fragment with a dot-segment)', reason: 'not_allowed' });
  });

  it('tool and prompt names are not URIs: no normal-form check', () => {
    assert.equal(tenant.decide('tool', 'A%41/../x', new Set()).allowed, true);
  });
});
