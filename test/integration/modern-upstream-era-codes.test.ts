// A 2026-07-28 upstream's own error with a code its era reserves for the spec (-32020 … -32099) that the spec
// does not define for it: -32042 (URL elicitation required, 2025-11-25 only, never reused) or one a later
// revision may allocate (-32060). Passed on unchanged, a 2025-11-25 client read the -32042 as URL elicitation
// required (the links in its data shown as the upstream's questions), a 2026-07-28 client's call became a URL
// round the upstream's era has no such thing as, and -32060 reached either client as whatever the client's
// revision makes of it. Each is the upstream's failure (-32603, message and data kept), for clients of both
// eras. The era's three refusals (-32020/-32021/-32022) are modern-upstream-refusals.test.ts's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { modernPost } from '../helpers/modern-http.js';
import { startModernRig, type ModernRig } from '../helpers/modern-server.js';
import { connectClient } from '../helpers/sdk.js';

const ELICITATIONS = { elicitations: [{ mode: 'url', url: 'http://127.0.0.1:9/consent', message: 'sign in', elicitationId: 'e1' }] };
const REFUSE = {
  test_simple_text: { code: -32060, message: 'tool failed (-32060)', data: { why: 'own' }, status: 200 },
  test_image_content: { code: -32042, message: 'tool failed (-32042)', data: ELICITATIONS, status: 200 },
};

describe("a 2026-07-28 upstream's error with a code its era reserves but does not define", () => {
  let rig: ModernRig;
  before(async () => {
    rig = await startModernRig({ env: { MODERN_FIXTURE_REFUSE: JSON.stringify(REFUSE) } });
  });
  after(() => rig.close());

  for (const [tool, code] of [['test_simple_text', -32060], ['test_image_content', -32042]] as const) {
    it(`${code} reaches a 2026-07-28 client as the upstream's failure (-32603, no URL round), message and data kept`, async () => {
      const a = await modernPost(rig.gw.url(), 'tools/call', { name: tool, arguments: {} }, { caps: { elicitation: { url: {}, form: {} } } });
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(a.body.error?.code, -32603, JSON.stringify(a.body));
      assert.equal(a.body.error.message, REFUSE[tool].message);
      assert.deepEqual(a.body.error.data, REFUSE[tool].data);
    });
  }

  it('a 2025-11-25 client gets them as the upstream failure too, never -32042 (URL elicitation required in its era)', async () => {
    const client = await connectClient(rig.gw, 'streamable-http');
    try {
      for (const tool of ['test_simple_text', 'test_image_content'] as const) {
        const err = await client.callTool({ name: tool, arguments: {} }).then((r) => assert.fail(JSON.stringify(r)), (e: { code?: number; message: string; data?: unknown }) => e);
        assert.equal(err.code, -32603, `${tool}: ${err.message}`);
        assert.match(err.message, new RegExp(REFUSE[tool].message.replace(/[()]/g, '\\$&')));
        assert.deepEqual(err.data, REFUSE[tool].data);
      }
    } finally {
      await client.close();
    }
  });
});
