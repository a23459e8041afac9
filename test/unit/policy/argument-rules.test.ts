// Tenant argument rules as pure functions: path normalisation and prefix containment, array paths,
// the JSON Schema overlay (ajv, draft 2020-12), how rules are selected by tool glob, the messages a
// client gets (rule named, client input quoted and truncated), and what the config loader refuses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import type { ArgumentRuleConfig } from '../../../src/config/schema.js';
import { ArgumentRules, pathProblem, quote, violationMessage } from '../../../src/policy/argument-rules.js';
import { TenantPolicy } from '../../../src/policy/tenant-policy.js';
import { hasProblem, MINIMAL_CONFIG, tenantRuleProblems } from '../../helpers/config-problems.js';

const UNDER = ['/srv/data', '/tmp/scratch'];

function rules(...configs: Array<Partial<ArgumentRuleConfig> & { name: string }>): ArgumentRules {
  const r = ArgumentRules.compile(configs.map((c) => ({ tools: ['*'], ...c }) as ArgumentRuleConfig));
  assert.ok(r);
  return r;
}

describe('pathProblem: a string path under a prefix', () => {
  const ok = (p: unknown, under = UNDER) => assert.equal(pathProblem(p, under), undefined, `${JSON.stringify(p)} should pass`);
  const bad = (p: unknown, fragment: string, under = UNDER) => {
    const problem = pathProblem(p, under);
    assert.ok(problem, `${JSON.stringify(p)} should be refused`);
    assert.ok(problem.includes(fragment), `"${problem}" should mention "${fragment}"`);
  };

  it('accepts the prefix itself and paths below it', () => {
    ok('/srv/data');
    ok('/srv/data/');
    ok('/srv/data/a/b.txt');
    ok('/tmp/scratch/x');
  });

  it('normalises "..", "." and duplicate or trailing slashes before comparing', () => {
    ok('/srv/data/a/../b');
    ok('/srv/data/./a');
    ok('//srv//data///a//');
    ok('/srv/other/../data/a');
    bad('/srv/data/../../etc/passwd', 'is not under /srv/data, /tmp/scratch');
    bad('/srv/data/..', 'is not under');
    bad('/srv/data/a/../../database', 'is not under');
    bad('/srv/data/../../../../../..', 'is not under');
  });

  it('does not mistake a sibling that shares the prefix string for a child', () => {
    bad('/srv/database', 'is not under');
    bad('/srv/data-old/x', 'is not under');
    bad('/srv/dat', 'is not under');
    bad('/srv', 'is not under');
    bad('/', 'is not under');
  });

  it('refuses relative paths (the upstream\'s working directory is unknown)', () => {
    bad('srv/data/x', 'is not an absolute path');
    bad('./x', 'is not an absolute path');
    bad('../srv/data', 'is not an absolute path');
    bad('', 'is not an absolute path');
    bad('~/x', 'is not an absolute path');
    bad('file:///srv/data/x', 'is not an absolute path');
  });

  it('refuses NUL and backslashes', () => {
    bad('/srv/data/x\0/../../etc', 'contains a NUL character');
    bad('/srv/data/x\\..\\..\\etc', 'contains a backslash');
  });

  it('refuses a value that is not a string', () => {
    bad(42, 'must be a string path, not a number');
    bad(null, 'not null');
    bad(['/srv/data/x'], 'not an array');
    bad({ path: '/srv/data' }, 'not an object');
    bad(true, 'not a boolean');
  });

  it('"/" as a prefix admits every absolute path, and still no relative one', () => {
    ok('/etc/passwd', ['/']);
    bad('etc', 'is not an absolute path', ['/']);
  });
});

describe('ArgumentRules: paths', () => {
  const r = rules({ name: 'files-under-data', tools: ['fs__*', 'everything__echo'], paths: { arguments: ['path', 'source', 'destination', 'extra[]'], under: UNDER } });

  it('passes allowed paths, a missing optional argument, and tools no rule names', () => {
    assert.equal(r.check('fs__read', { path: '/srv/data/a' }), undefined);
    assert.equal(r.check('fs__move', { source: '/srv/data/a', destination: '/tmp/scratch/b' }), undefined);
    assert.equal(r.check('fs__list', {}), undefined);
    assert.equal(r.check('fs__list', undefined), undefined);
    assert.equal(r.check('fs__list', { other: '/etc/passwd' }), undefined, 'undeclared arguments are not paths');
    assert.equal(r.check('git__read', { path: '/etc/passwd' }), undefined, 'no rule names git__*');
  });

  it('refuses the first bad path, naming rule, tool and argument', () => {
    const v = r.check('fs__move', { source: '/srv/data/a', destination: '/etc/cron.d/x' });
    assert.deepEqual(v, { rule: 'files-under-data', tool: 'fs__move', argument: 'destination', reason: 'argument "destination" ("/etc/cron.d/x") is not under /srv/data, /tmp/scratch' });
    assert.equal(violationMessage(v!), 'Argument rule "files-under-data" refused tool "fs__move": argument "destination" ("/etc/cron.d/x") is not under /srv/data, /tmp/scratch');
  });

  it('reads own properties only', () => {
    const args = JSON.parse('{"__proto__": "/etc/passwd", "path": "/srv/data/x"}') as Record<string, unknown>;
    assert.equal(r.check('fs__read', args), undefined);
    const withProto = rules({ name: 'p', paths: { arguments: ['__proto__', 'constructor'], under: UNDER } });
    assert.equal(withProto.check('t', {}), undefined, 'inherited "constructor" is not an argument');
    assert.equal(withProto.check('t', args)?.argument, '__proto__');
  });

  it('checks every element of an array argument declared "name[]"', () => {
    assert.equal(r.check('fs__zip', { extra: ['/srv/data/a', '/tmp/scratch/b'] }), undefined);
    assert.equal(r.check('fs__zip', { extra: [] }), undefined);
    const v = r.check('fs__zip', { extra: ['/srv/data/a', '/srv/data/../../etc'] });
    assert.equal(v?.argument, 'extra');
    assert.match(v!.reason, /^argument "extra\[1\]" \("\/srv\/data\/\.\.\/\.\.\/etc"\) is not under/);
    assert.match(r.check('fs__zip', { extra: '/srv/data/a' })!.reason, /must be an array of string paths, not a string/);
    assert.match(r.check('fs__zip', { extra: [1] })!.reason, /"extra\[0\]" must be a string path, not a number/);
  });

  it('refuses arguments that are not an object when a rule applies', () => {
    assert.match(r.check('fs__read', ['/etc/passwd'])!.reason, /must be an object, not an array/);
    assert.match(r.check('fs__read', '/etc/passwd')!.reason, /must be an object, not a string/);
    assert.match(r.check('fs__read', null)!.reason, /must be an object, not null/);
    assert.equal(r.check('other', 'whatever'), undefined, 'no rule applies: the upstream answers');
  });

  it('quotes client input and cuts it to 100 characters', () => {
    const long = `/etc/${'x'.repeat(500)}`;
    const v = r.check('fs__read', { path: long })!;
    assert.ok(v.reason.includes(`("${long.slice(0, 100)}"…)`), v.reason);
    assert.ok(v.reason.length < 200);
    const longTool = `fs__${'y'.repeat(300)}`;
    const m = violationMessage(r.check(longTool, { path: '/etc' })!);
    assert.ok(m.length < 300, m);
    assert.equal(quote('a\u0000b"'), '"a\\u0000b\\""');
  });
});

describe('ArgumentRules: JSON Schema overlay', () => {
  const r = rules({
    name: 'echo-short',
    tools: ['everything__echo'],
    schema: {
      type: 'object',
      properties: {
        message: { type: 'string', maxLength: 10, pattern: '^[^<>]*$' },
        mode: { enum: ['plain', 'loud'] },
        kind: { const: 'note' },
        count: { type: 'integer', minimum: 1, maximum: 5 },
        tags: { type: 'array', items: { type: 'string', minLength: 2 } },
        url: { type: 'string', format: 'uri' },
      },
      required: ['message'],
      additionalProperties: false,
    },
  });
  const reason = (args: unknown) => r.check('everything__echo', args)?.reason;

  it('passes conforming arguments', () => {
    assert.equal(reason({ message: 'hi' }), undefined);
    assert.equal(reason({ message: 'hi', mode: 'loud', kind: 'note', count: 5, tags: ['ab'], url: 'https://x.test/' }), undefined);
  });

  it('enforces type, required, enum, const, pattern, lengths, bounds, items, format and additionalProperties', () => {
    assert.match(reason({ message: 7 })!, /^argument "message" must be string \(the rule's schema\)$/);
    assert.match(reason({})!, /^the arguments must have required property 'message'/);
    assert.match(reason(undefined)!, /must have required property 'message'/, 'no arguments are checked as {}');
    assert.match(reason({ message: 'x'.repeat(11) })!, /argument "message" must NOT have more than 10 characters/);
    assert.match(reason({ message: '<script>' })!, /argument "message" must match pattern/);
    assert.match(reason({ message: 'a', mode: 'quiet' })!, /argument "mode" must be equal to one of the allowed values/);
    assert.match(reason({ message: 'a', kind: 'x' })!, /argument "kind" must be equal to constant/);
    assert.match(reason({ message: 'a', count: 0 })!, /argument "count" must be >= 1/);
    assert.match(reason({ message: 'a', count: 6 })!, /argument "count" must be <= 5/);
    assert.match(reason({ message: 'a', count: 1.5 })!, /argument "count" must be integer/);
    assert.match(reason({ message: 'a', tags: ['ok', 'x'] })!, /argument "tags\/1" must NOT have fewer than 2 characters/);
    assert.match(reason({ message: 'a', url: 'not a uri' })!, /argument "url" must match format "uri"/);
    const extra = r.check('everything__echo', { message: 'a', sneaky: 1 })!;
    assert.match(extra.reason, /^the arguments must NOT have additional properties \("sneaky"\)/);
    assert.equal(extra.argument, 'sneaky');
  });

  it('enforces type-less constraints and combinators (where z.fromJSONSchema would not)', () => {
    const t = rules({ name: 'typeless', schema: { properties: { a: { maxLength: 2 } }, allOf: [{ required: ['a'] }] } });
    assert.equal(t.check('x', { a: 'ok' }), undefined);
    assert.match(t.check('x', { a: 'long' })!.reason, /argument "a" must NOT have more than 2 characters/);
    assert.match(t.check('x', {})!.reason, /must have required property 'a'/);
    const u = rules({ name: 'unicode', schema: { properties: { a: { type: 'string', pattern: '^\\p{L}+$' } } } });
    assert.equal(u.check('x', { a: 'été' }), undefined);
    assert.ok(u.check('x', { a: '1' }));
  });

  it('enforces not, if/then/else and unevaluatedProperties', () => {
    const c = rules({
      name: 'combinators',
      schema: {
        properties: { mode: { not: { const: 'rm' } }, force: { type: 'boolean' } },
        if: { properties: { force: { const: true } }, required: ['force'] },
        then: { required: ['reason'] },
        unevaluatedProperties: false,
        allOf: [{ properties: { reason: { type: 'string' } } }],
      },
    });
    assert.equal(c.check('x', { mode: 'ls', force: true, reason: 'why' }), undefined);
    assert.ok(c.check('x', { mode: 'rm' }), 'not');
    assert.match(c.check('x', { force: true })!.reason, /required property 'reason'/, 'if/then');
    assert.ok(c.check('x', { other: 1 }), 'unevaluatedProperties');
  });

  it('accepts draft 2020-12 keywords ($schema, $defs, prefixItems)', () => {
    const d = rules({
      name: 'draft2020',
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $defs: { p: { type: 'string', minLength: 1 } },
        properties: { pair: { type: 'array', prefixItems: [{ $ref: '#/$defs/p' }, { type: 'number' }], items: false } },
      },
    });
    assert.equal(d.check('x', { pair: ['a', 1] }), undefined);
    assert.ok(d.check('x', { pair: ['a', 1, 2] }));
    assert.ok(d.check('x', { pair: ['', 1] }));
  });

  it('runs paths first, then the schema; every matching rule must pass, in order', () => {
    const both = rules(
      { name: 'first', tools: ['fs__*'], paths: { arguments: ['path'], under: ['/srv/data'] }, schema: { properties: { path: { maxLength: 20 } } } },
      { name: 'second', tools: ['fs__write'], schema: { required: ['content'] } },
    );
    assert.equal(both.check('fs__read', { path: '/etc/x' })?.rule, 'first');
    assert.match(both.check('fs__read', { path: '/srv/data/aaaaaaaaaaaaaaaaa' })!.reason, /more than 20 characters/);
    assert.equal(both.check('fs__write', { path: '/srv/data/a' })?.rule, 'second');
    assert.equal(both.check('fs__write', { path: '/srv/data/a', content: '' }), undefined);
  });
});

describe('TenantPolicy: argument rules are compiled once, and absent when there are none', () => {
  const base = { upstreams: [{ name: 'a', transport: 'stdio', command: 'node', sandbox: 'none' }], endpoints: [{ path: '/mcp', upstreams: ['a'] }] };

  it('a tenant without rules has none to run', () => {
    const cfg = parseConfig({ ...base, tenants: [{ name: 't', endpoints: ['*'] }] }, 'test', {});
    assert.deepEqual(cfg.tenants[0]!.arguments, []);
    assert.equal(new TenantPolicy(cfg.tenants[0]!).argumentRules, undefined);
  });

  it('a tenant with rules gets them compiled from the frozen config', () => {
    const cfg = parseConfig(
      { ...base, tenants: [{ name: 't', endpoints: ['*'], arguments: [{ name: 'r', tools: ['*'], paths: { arguments: ['path'], under: ['/srv/data/'] }, schema: { type: 'object' } }] }] },
      'test',
      {},
    );
    const p = new TenantPolicy(cfg.tenants[0]!);
    assert.equal(p.argumentRules?.check('x', { path: '/srv/data/y' }), undefined, 'a trailing slash on the prefix is normalised');
    assert.equal(p.argumentRules?.check('x', { path: '/srv/database' })?.rule, 'r');
  });
});

describe('config: argument rules are validated at load', () => {
  const problems = (rules: unknown[]): string[] => tenantRuleProblems('arguments', rules);
  const has = hasProblem;
  const at = 'tenants[0].arguments';

  it('refuses duplicate names, empty rules and missing tools', () => {
    has(problems([{ name: 'r', tools: ['*'], schema: true }, { name: 'r', tools: ['*'], schema: true }]), `${at}[1].name`, 'duplicate argument rule "r"');
    has(problems([{ name: 'r', tools: ['*'] }]), `${at}[0]`, 'needs "paths", "schema" or both');
    has(problems([{ name: 'r', tools: [], schema: true }]), `${at}[0].tools`, '');
    has(problems([{ name: 'bad name', tools: ['*'], schema: true }]), `${at}[0].name`, '1-64 of');
    has(problems([{ name: 'r', tools: ['*'], schema: true, extra: 1 }]), `${at}[0].extra`, 'unknown key');
  });

  it('refuses prefixes that are relative, un-normalised or contain NUL / backslash', () => {
    const p = (under: string[]) => problems([{ name: 'r', tools: ['*'], paths: { arguments: ['path'], under } }]);
    has(p(['srv/data']), `${at}[0].paths.under[0]`, 'absolute POSIX path');
    has(p(['/srv/../etc']), `${at}[0].paths.under[0]`, '".." segments');
    has(p(['/srv/./data']), `${at}[0].paths.under[0]`, '"." or');
    has(p(['/srv\\data']), `${at}[0].paths.under[0]`, 'no backslash');
    has(p([]), `${at}[0].paths.under`, '');
    has(problems([{ name: 'r', tools: ['*'], paths: { arguments: ['a[0]'], under: ['/x'] } }]), `${at}[0].paths.arguments[0]`, '"name[]"');
  });

  it('refuses schemas that do not compile: wrong types, unknown keywords and formats, remote refs, other drafts', () => {
    const s = (schema: unknown) => problems([{ name: 'r', tools: ['*'], schema }]);
    has(s({ type: 'strng' }), `${at}[0].schema`, 'not a usable JSON Schema');
    has(s({ maxLenght: 3 }), `${at}[0].schema`, 'unknown keyword: "maxLenght"');
    has(s({ type: 'string', format: 'no-such-format' }), `${at}[0].schema`, 'unknown format');
    has(s({ $ref: 'https://example.test/schema.json' }), `${at}[0].schema`, "can't resolve reference");
    has(s({ $schema: 'http://json-schema.org/draft-07/schema#' }), `${at}[0].schema`, 'draft-07');
    has(s({ type: 'string', pattern: '(' }), `${at}[0].schema`, 'Invalid regular expression');
    has(s('a string'), `${at}[0].schema`, 'an object, or true / false');
  });

  it('lets two tenants use the same $id without one resolving the other\'s references', () => {
    const rule = (maxLength: number) => ({ name: 'r', tools: ['*'], schema: { $id: 'https://schemas.test/echo', properties: { m: { $ref: '#/$defs/m' } }, $defs: { m: { maxLength } } } });
    const cfg = parseConfig({ ...MINIMAL_CONFIG, tenants: [{ name: 't1', endpoints: ['*'], arguments: [rule(2)] }, { name: 't2', endpoints: ['*'], arguments: [rule(5)] }] }, 'test', {});
    const [a, b] = cfg.tenants.map((t) => new TenantPolicy(t).argumentRules!);
    assert.ok(a!.check('x', { m: 'abc' }));
    assert.equal(b!.check('x', { m: 'abc' }), undefined);
  });
});
