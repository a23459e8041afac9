// The glob questions TenantPolicy.reachesUpstream asks of a tenant's patterns about an upstream's prefix.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coversAllUnder, mayMatchUnder } from '../../../src/policy/upstream-reach.js';

describe('upstream reach globs', () => {
  it('mayMatchUnder: some name under the prefix matches', () => {
    for (const p of ['*', 'gh__*', 'g?__x', '*__delete', 'gh*', 'gh__', '*h_*']) assert.equal(mayMatchUnder(p, 'gh__'), true, p);
    for (const p of ['fs__*', 'gh_', 'g', 'ghx*', '?h_x']) assert.equal(mayMatchUnder(p, 'gh__'), false, p);
  });
  it('coversAllUnder: every name under the prefix matches (a trailing "*" after a start of it)', () => {
    for (const p of ['*', 'gh__*', 'g*', '*__*', 'g?__*', '**']) assert.equal(coversAllUnder(p, 'gh__'), true, p);
    for (const p of ['gh__x*', 'gh__', 'fs__*', '*__delete_*', 'gh__?*']) assert.equal(coversAllUnder(p, 'gh__'), false, p);
    assert.equal(coversAllUnder('*', ''), true);
    assert.equal(coversAllUnder('gh__*', ''), false);
  });
});
