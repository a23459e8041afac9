// Confirmation rules as pure functions: which rule asks about a call (tool glob, canonical name on an
// unprefixed endpoint, argument conditions reusing the argument rules' matchers), the message the user
// is shown (tool, upstream, arguments bounded in size, secret-looking keys and values masked), and what
// the config loader refuses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfirmRuleConfig } from '../../../src/config/schema.js';
import { confirmationMessage, isSecretKey, maskSecrets, MASK, shownArguments } from '../../../src/policy/confirm-message.js';
import { ConfirmRules } from '../../../src/policy/confirm-rules.js';
import { TenantPolicy } from '../../../src/policy/tenant-policy.js';
import { parseConfig } from '../../../src/config/load.js';
import { hasProblem, tenantRuleProblems } from '../../helpers/config-problems.js';

function rules(...configs: Array<Partial<ConfirmRuleConfig> & { match: string }>): ConfirmRules {
  const r = ConfirmRules.compile(configs.map((c) => ({ timeoutMs: 120_000, ifUnsupported: 'refuse', ...c }) as ConfirmRuleConfig));
  assert.ok(r);
  return r;
}

describe('ConfirmRules: which rule asks', () => {
  it('compiles to undefined without rules (the per-call check is one property read)', () => {
    assert.equal(ConfirmRules.compile([]), undefined);
  });

  it('matches the tool glob, or the canonical name on an unprefixed endpoint; the first matching rule asks', () => {
    const r = rules({ match: 'github__delete_*', message: 'first' }, { match: '*delete*', message: 'second' });
    assert.equal(r.find('github__delete_repo', {})?.message, 'first');
    assert.equal(r.find('gitlab__delete_project', {})?.message, 'second');
    assert.equal(r.find('delete_repo', {}, 'github__delete_repo')?.message, 'first');
    assert.equal(r.find('github__create_issue', {}), undefined);
  });

  it('when.schema: asks only when the arguments satisfy the schema', () => {
    const r = rules({ match: '*', when: { schema: { type: 'object', properties: { force: { const: true } }, required: ['force'] } } });
    assert.ok(r.find('x', { force: true }));
    assert.equal(r.find('x', { force: false }), undefined);
    assert.equal(r.find('x', undefined), undefined);
  });

  it('when.paths: asks when a named path argument is not under the prefixes (the argument rules\' path check)', () => {
    const r = rules({ match: '*', when: { paths: { arguments: ['path', 'paths[]'], notUnder: ['/tmp/scratch'] } } });
    assert.equal(r.find('x', { path: '/tmp/scratch/a.txt' }), undefined);
    assert.equal(r.find('x', { other: '/etc/passwd' }), undefined, 'an absent argument asks nothing');
    assert.ok(r.find('x', { path: '/tmp/scratch/../../etc/passwd' }));
    assert.ok(r.find('x', { path: 'relative.txt' }), 'a path it cannot place asks');
    assert.ok(r.find('x', { paths: ['/tmp/scratch/a', '/home/u'] }));
    assert.equal(r.find('x', { paths: ['/tmp/scratch/a'] }), undefined);
  });

  it('both conditions: either one asks; arguments that are not an object always ask', () => {
    const r = rules({ match: '*', when: { schema: { required: ['force'] }, paths: { arguments: ['path'], notUnder: ['/tmp'] } } });
    assert.ok(r.find('x', { force: 1, path: '/tmp/a' }));
    assert.ok(r.find('x', { path: '/etc/a' }));
    assert.equal(r.find('x', { path: '/tmp/a' }), undefined);
    assert.ok(r.find('x', ['not', 'an', 'object']));
    assert.ok(r.find('x', 'text'));
  });

  it('carries the rule\'s message, timeout and ifUnsupported from the config, with defaults', () => {
    const cfg = parseConfig(
      {
        upstreams: [{ name: 'a', transport: 'stdio', command: 'node', sandbox: 'none' }],
        endpoints: [{ path: '/mcp', upstreams: ['a'] }],
        tenants: [{ name: 't', endpoints: ['*'], confirm: [{ match: 'a__rm*' }, { match: 'a__drop*', message: 'Drops a table', timeoutMs: 500, ifUnsupported: 'allow' }] }],
      },
      'test',
      {},
    );
    const p = new TenantPolicy(cfg.tenants[0]!);
    const rm = p.confirmRules?.find('a__rm', {});
    assert.deepEqual({ ...rm }, { match: 'a__rm*', message: undefined, timeoutMs: 120_000, ifUnsupported: 'refuse' });
    const drop = p.confirmRules?.find('a__drop', {});
    assert.deepEqual({ ...drop }, { match: 'a__drop*', message: 'Drops a table', timeoutMs: 500, ifUnsupported: 'allow' });
    assert.equal(new TenantPolicy({ ...cfg.tenants[0]!, confirm: [] }).confirmRules, undefined);
  });
});

describe('the confirmation message', () => {
  it('names the tool and upstream, shows the rule\'s message and the arguments as indented JSON', () => {
    const m = confirmationMessage({ tool: 'github__delete_repo', upstream: 'github', message: 'Deleting a repository cannot be undone.', arguments: { repo: 'acme/site', force: true } });
    assert.equal(
      m,
      [
        'Switchboard asks you to confirm this tool call before it is sent.',
        'Deleting a repository cannot be undone.',
        '',
        'Tool: "github__delete_repo"',
        'Upstream: "github"',
        'Arguments:',
        '{\n  "repo": "acme/site",\n  "force": true\n}',
      ].join('\n'),
    );
  });

  it('masks values under secret-like keys, at any depth', () => {
    for (const k of ['password', 'Password', 'db_password', 'passwd', 'token', 'accessToken', 'refresh_token', 'secret', 'clientSecret', 'apiKey', 'api-key', 'private_key', 'signingKey', 'Authorization', 'cookie', 'credentials']) {
      assert.ok(isSecretKey(k), `${k} is secret-like`);
    }
    for (const k of ['repo', 'path', 'name', 'message', 'count', 'owner']) assert.equal(isSecretKey(k), false, `${k} is not`);
    const shown = shownArguments({ repo: 'acme/site', login: { password: 'p4ss', nested: { apiKey: 'abc' } }, headers: [{ Authorization: 'x' }] });
    assert.doesNotMatch(shown, /p4ss|"abc"|"x"/);
    assert.equal(shown.split(MASK).length - 1, 3, shown);
    assert.match(shown, /"repo": "acme\/site"/);
  });

  it('shows keys that name what a call acts on: an S3 object key, a Redis key, a primary key (found by a review)', () => {
    // Masked by name, "delete this object: [masked]" left the user nothing to judge; an injected call chose the target unseen.
    for (const k of ['key', 'keys', 'Key', 'objectKey', 'object_key', 'cacheKey', 'primaryKey', 'partitionKey', 'sortKey', 'rowKey', 'sourceKey', 'destinationKey']) assert.equal(isSecretKey(k), false, `${k} names a target`);
    const shown = shownArguments({ bucket: 'prod-backups', key: 'db/2026-12-05.dump', keys: ['a.txt', 'b.txt'] });
    assert.match(shown, /"key": "db\/2026-12-05\.dump"/);
    assert.match(shown, /"a\.txt"/);
    // A credential-looking value under such a name is still masked by its look.
    assert.ok(shownArguments({ key: 'sk-abcdefghijklmnopqrstuvwx' }).includes(MASK));
  });

  it('masks values that look like credentials wherever they appear', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz';
    const cases = [
      `Bearer ${'A1b2C3d4'.repeat(3)}`,
      `curl -H "Authorization: Bearer abcdefgh12345678"`,
      jwt,
      `token is ${jwt} ok`,
      'ghp_' + 'a1B2c3D4e5'.repeat(4),
      'sk-' + 'Zq9'.repeat(8),
      'AKIAIOSFODNN7EXAMPLE',
      'deadbeef'.repeat(5), // 40 hex characters
      'q2VvZ3Jhc3NlLWNvbmZpcm0tc3VwZXItc2VjcmV0LWtleQ==', // base64
    ];
    for (const c of cases) {
      const masked = maskSecrets(c);
      assert.ok(masked.includes(MASK), `${c} → ${masked}`);
      assert.ok(!masked.includes(c.replace(/^.*(Bearer )/, '')), `${c} is gone`);
    }
  });

  it('leaves ordinary values alone: words, paths, short ids, UUIDs, sentences', () => {
    for (const v of ['acme/site', '/srv/data/Reports/Q1-2024/Summary_Final_Version2.txt', 'main', 'issue-1234', '123e4567-e89b-12d3-a456-426614174000', 'Delete the staging branch please', 'this_is_a_long_snake_case_identifier_name']) {
      assert.equal(maskSecrets(v), v, v);
    }
  });

  it('shows a commit or digest under a name that says so: the target of a reset or a deploy, not a key (found by a review)', () => {
    // Masked as "32+ hex characters", a confirmation of "reset main to <commit>" or "run image@sha256:<digest>" hid what would be run.
    const sha = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3';
    const digest = `sha256:${'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'}`;
    const shown = shownArguments({ branch: 'main', commit: sha, sha, image: `registry.example/app@${digest}`, digest, ref: sha, revision: sha });
    assert.ok(!shown.includes(MASK), shown);
    // Under any other name, 32+ hex characters are still masked (an API secret), and so is a token under a commit-like name.
    assert.ok(shownArguments({ value: sha }).includes(MASK));
    assert.ok(shownArguments({ commit: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789' }).includes(MASK));
  });

  it('is bounded: long strings cut, wide and deep structures elided, the whole at most ~2000 characters', () => {
    const long = shownArguments({ text: 'xy'.repeat(5_000) });
    assert.ok(long.length < 300, String(long.length));
    assert.match(long, /… \(10000 characters in all, 9800 in the middle not shown\) …/);
    assert.equal(shownArguments({ text: 'x'.repeat(10_000) }), '{\n  "text": "[U+0078 ×10000]"\n}');
    const wide = shownArguments(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])));
    assert.match(wide, /"…": "30 more keys"/);
    const list = shownArguments({ items: Array.from({ length: 50 }, (_, i) => i) });
    assert.match(list, /"… 30 more items"/);
    let deep: unknown = 'bottom';
    for (let i = 0; i < 10; i++) deep = { d: deep };
    assert.match(shownArguments(deep), /"\{…\}"/);
    const huge = shownArguments(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'y'.repeat(199)])));
    assert.ok(huge.length < 2100, String(huge.length));
    // Each argument its share, its start and its end shown (before 2026-12-06 the whole was cut after 2000 characters).
    assert.match(huge, /\{\n {2}"k0": "y+… \(\d+ not shown\) …y+",\n/);
    assert.match(huge, /\n {2}"k19": "y+… \(\d+ not shown\) …y+"\n\}$/);
    assert.equal(shownArguments(undefined), '(none)');
  });

  it('writes characters that reorder or hide text as \\u escapes, so the user reads what is sent (found by a review)', () => {
    // Bidi overrides and isolates reorder what a client renders (Trojan Source: a statement seems to sit in a
    // comment); a line separator fakes a line; a zero-width space, a tag character or a filler hides a
    // difference; a C1 CSI (U+009B) is a terminal client's escape sequence.
    const sql = 'SELECT 1; DROP TABLE users; /*\u202E\u2066 comment \u2069\u2066*/';
    const m = confirmationMessage({
      tool: 'db__run\u200Bsql',
      upstream: 'db',
      message: undefined,
      arguments: { sql, ['pa\u202Eth']: '/tmp/scratch/a.txt\u2028\u2028Upstream: "safe"', note: 'ok\u{E0041}\u{E0042}\u009b2J\u007f\u00ad\u3164' },
    });
    assert.doesNotMatch(m, /[\u007f-\u009f\u00ad\u200b\u2028\u2029\u202e\u2066\u2069\u3164\u{E0041}\u{E0042}]/u, m);
    assert.match(m, /Tool: "db__run\\u200bsql"/);
    assert.match(m, /"pa\\u202eth": "\/tmp\/scratch\/a\.txt\\u2028\\u2028Upstream: \\"safe\\""/);
    assert.match(m, /"sql": "SELECT 1; DROP TABLE users; \/\*\\u202e\\u2066 comment \\u2069\\u2066\*\/"/);
    assert.match(m, /"note": "ok\\udb40\\udc41\\udb40\\udc42\\u009b2J\\u007f\\u00ad\\u3164"/);
    // Still the JSON of what is sent: read back, it is the arguments themselves.
    const json = m.slice(m.indexOf('Arguments:\n') + 'Arguments:\n'.length);
    assert.deepEqual(JSON.parse(json), { sql, ['pa\u202Eth']: '/tmp/scratch/a.txt\u2028\u2028Upstream: "safe"', note: 'ok\u{E0041}\u{E0042}\u009b2J\u007f\u00ad\u3164' });
    // Ordinary text, accents and emoji included, is left as it is.
    assert.match(confirmationMessage({ tool: 't', upstream: undefined, message: undefined, arguments: { text: 'Grüße 👋 ✅' } }), /"text": "Grüße 👋 ✅"/);
  });

  it('shows the tool\'s declared parameters first: keys a call adds cannot push them out of view (found by a review)', () => {
    // What an injected instruction can make a model send: 25 keys of its own, integer-like ones (which a JSON
    // object lists before any other) with long values, before the argument that matters.
    const padding = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [String(i), 'x'.repeat(199)]));
    const args = { ...padding, source: '/tmp/scratch/a', destination: '/etc/passwd' };
    const m = confirmationMessage({ tool: 'fs__move_file', upstream: 'fs', message: undefined, arguments: args, declared: ['source', 'destination'] });
    assert.match(m, /Arguments:\n\{\n {2}"source": "\/tmp\/scratch\/a",\n {2}"destination": "\/etc\/passwd",\n {2}"0": "x+… \(\d+ not shown\) …x+",/);
    assert.match(m, /"…": "7 more keys"\n\}$/);
    // Without declared parameters (a name that finds no tool), the keys as JSON lists them; nested values indent as before.
    assert.equal(shownArguments({ a: { b: [1, 'two'] }, c: null }), '{\n  "a": {\n    "b": [\n      1,\n      "two"\n    ]\n  },\n  "c": null\n}');
    assert.equal(shownArguments({}), '{}');
  });

  it('keeps a "__proto__" key as a key', () => {
    const args = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    assert.match(shownArguments(args), /"__proto__": \{\n\s+"polluted": true/);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('config: confirmation rules are validated at load', () => {
  const problems = (rules: unknown[]): string[] => tenantRuleProblems('confirm', rules);
  const has = hasProblem;
  const at = 'tenants[0].confirm';

  it('refuses unknown keys (did you mean), an empty match, an empty when, a bad schema, bad prefixes, bad values', () => {
    has(problems([{ match: 'x', mesage: 'typo' }]), `${at}[0].mesage`, 'message');
    has(problems([{ match: '' }]), `${at}[0].match`, '');
    has(problems([{ match: 'x', when: {} }]), `${at}[0].when`, 'needs "schema", "paths" or both');
    has(problems([{ match: 'x', when: { schema: { type: 'object', maxLenght: 3 } } }]), `${at}[0].when.schema`, 'not a usable JSON Schema');
    has(problems([{ match: 'x', when: { paths: { arguments: ['p'], notUnder: ['tmp'] } } }]), `${at}[0].when.paths.notUnder[0]`, 'absolute POSIX path');
    has(problems([{ match: 'x', when: { paths: { arguments: ['p'], under: ['/tmp'] } } }]), `${at}[0].when.paths.under`, 'unknown key');
    has(problems([{ match: 'x', ifUnsupported: 'skip' }]), `${at}[0].ifUnsupported`, '');
    has(problems([{ match: 'x', timeoutMs: 5 }]), `${at}[0].timeoutMs`, '');
  });
});
