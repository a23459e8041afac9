// Elicitation has two modes, each declared on its own (2025-11-25): `elicitation: { url: {} }` is a client
// that can open URLs and cannot show a form; a bare `elicitation: {}` (2025-06-18) is form mode. A form
// put to a client that declared only URL mode used to be delivered (only the capability's presence was
// checked), to fail there or be shown as nothing; it is now refused like any undeclared capability, in
// both eras (a 2025 client's session, a 2026-07-28 client's exchange).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { missingCapability } from '../../../src/jsonrpc/client-capabilities.js';
import { undeliverable } from '../../../src/session/client-capability-check.js';

const FORM = { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } };
const URL_MODE = { mode: 'url', message: 'Sign in', url: 'https://example.com/auth', elicitationId: 'e1' };

describe('which elicitation mode a client declared', () => {
  it('a 2025 session: a form is refused to a client that declared only URL mode, and delivered to one that declared form', () => {
    assert.match(undeliverable({ elicitation: { url: {} } }, 'elicitation/create', FORM) ?? '', /did not declare .*elicitation/);
    assert.match(undeliverable({ elicitation: { url: {} } }, 'elicitation/create', { ...FORM, mode: 'form' }) ?? '', /did not declare .*elicitation/);
    assert.equal(undeliverable({ elicitation: {} }, 'elicitation/create', FORM), undefined);
    assert.equal(undeliverable({ elicitation: { form: {} } }, 'elicitation/create', FORM), undefined);
    assert.equal(undeliverable({ elicitation: { form: {}, url: {} } }, 'elicitation/create', FORM), undefined);
    assert.equal(undeliverable({ elicitation: { url: {} } }, 'elicitation/create', URL_MODE), undefined);
    assert.match(undeliverable({ elicitation: {} }, 'elicitation/create', URL_MODE) ?? '', /URL-mode elicitation/);
  });

  it('a 2026-07-28 exchange: a form needs form mode (its -32021 names it) from a client that declared only URL mode', () => {
    assert.deepEqual(missingCapability({ elicitation: { url: {} } }, 'elicitation/create', FORM), { elicitation: { form: {} } });
    assert.equal(missingCapability({ elicitation: {} }, 'elicitation/create', FORM), undefined);
    assert.equal(missingCapability({ elicitation: { url: {} } }, 'elicitation/create', URL_MODE), undefined);
    assert.deepEqual(missingCapability({ elicitation: { form: {} } }, 'elicitation/create', URL_MODE), { elicitation: { url: {} } });
  });
});
