import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { corpusView, measureRetrieval, type Quality } from '../../bench/tools/retrieval.js';

// The retrieval half of `npm run bench:tools`, on the committed corpus through the gateway's own
// ToolViews. Quality, not timing: the same ranking gives the same figures on any machine.
const figures = (q: Quality): string => `recall@1 ${q.recallAt1.toFixed(3)}, recall@5 ${q.recallAt5.toFixed(3)}, MRR ${q.mrr.toFixed(3)} over ${q.queries} queries`;

describe('tool search retrieval on the corpus', () => {
  const r = measureRetrieval(corpusView());

  it('holds what the lexical ranking reaches now (a change that loses ground fails here)', () => {
    // Measured when the floors were last raised: recall@5 0.830, recall@1 0.539, MRR 0.658 (held-out half
    // 0.791 / 0.497 / 0.621); before unasked destroying changes were lowered, 0.827 / 0.536 / 0.656 (held
    // out the same); before questions lowered the tools that change, 0.820 / 0.529 / 0.649 (held
    // out 0.784 / 0.490 / 0.613); before the named-server and unasked-change factors and the synonym
    // groups added with them, 0.784 / 0.497 / 0.619 (held out 0.765 / 0.490 / 0.606).
    assert.ok(r.overall.recallAt5 >= 0.828, figures(r.overall));
    assert.ok(r.overall.recallAt1 >= 0.53, figures(r.overall));
    assert.ok(r.overall.mrr >= 0.655, figures(r.overall));
    assert.ok(r.heldOut.recallAt5 >= 0.785, `held out: ${figures(r.heldOut)}`);
  });

  // Issue 16's acceptance floors for the lexical path. Not reached yet: todo keeps them in sight (the
  // runner reports the miss) without failing the suite.
  it('reaches the acceptance floors: recall@5 ≥ 0.90, recall@1 ≥ 0.70', { todo: 'lexical ranking reaches about 0.82 / 0.53; see README, tool search figures' }, () => {
    assert.ok(r.overall.recallAt5 >= 0.9, figures(r.overall));
    assert.ok(r.overall.recallAt1 >= 0.7, figures(r.overall));
  });

  it('counts a query as a hit by any of its expected tools and ranks every query', () => {
    assert.equal(r.outcomes.length, r.overall.queries);
    assert.equal(r.tuning.queries + r.heldOut.queries, r.overall.queries);
    for (const o of r.outcomes) if (o.rank !== undefined) assert.ok(o.rank >= 1);
  });
});
