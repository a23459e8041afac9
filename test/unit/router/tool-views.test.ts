// ToolViews keeps a view while some instance lists its catalogue, however many such versions there are
// (tenants' or sessions' instances that list different tools), and lets go of versions no instance
// lists any more. It kept four per curation and dropped the oldest for a fifth, live or not: an endpoint
// with more variants than that rebuilt a view, and its index, on every request (found by a review).
// Instances here are plain objects: what ToolViews knows of one is its identity and what it listed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toolsSchema } from '../../../src/config/tools-schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { ToolViews } from '../../../src/router/tool-views.js';

type Catalogue = Map<string, Record<string, unknown>>;

const catalogue = (...names: string[]): Catalogue => new Map(names.map((n) => [n, { name: n, description: `Does ${n}.`, inputSchema: { type: 'object' } }]));

/** An endpoint of one upstream, "up", whose instances are `instances` (changed by the test). */
function endpoint() {
  const instances = new Set<object>();
  const views = new ToolViews(toolsSchema.parse({ exposure: 'search' }), false, createLogger('silent'), { live: () => [{ name: 'up', instances }] });
  const view = (inst: object, c: Catalogue) => views.view(views.curationFor(''), new Map([['up', c]]), new Map([['up', inst]]));
  return { instances, views, view };
}

describe('ToolViews: live views kept, stale ones let go', () => {
  it('twenty instances with catalogues of their own: one view each, built once however often asked', () => {
    const { instances, views, view } = endpoint();
    const own = Array.from({ length: 20 }, (_, i) => ({ inst: {}, c: catalogue('common', `own_${i}`) }));
    for (const o of own) instances.add(o.inst);
    const first = own.map((o) => view(o.inst, o.c));
    for (let round = 0; round < 3; round++) own.forEach((o, i) => assert.equal(view(o.inst, o.c), first[i], `instance ${i}, round ${round}: the same view, not a rebuilt one`));
    assert.equal(views.size, 20);
  });

  it('instances that agree share one view (content, not the catalogue object, decides)', () => {
    const { instances, views, view } = endpoint();
    const a = {};
    const b = {};
    instances.add(a).add(b);
    assert.equal(view(a, catalogue('x', 'y')), view(b, catalogue('x', 'y')));
    assert.equal(views.size, 1);
  });

  it('a version no instance lists any more is let go; the live ones stay', () => {
    const { instances, views, view } = endpoint();
    const own = Array.from({ length: 10 }, (_, i) => ({ inst: {}, c: catalogue(`v1_${i}`) }));
    for (const o of own) instances.add(o.inst);
    const before = own.map((o) => view(o.inst, o.c));
    // Each instance's list changed: its first version is stale. One instance went away altogether.
    const gone = own.pop()!;
    instances.delete(gone.inst);
    const after = own.map((o, i) => view(o.inst, catalogue(`v2_${i}`)));
    assert.ok(views.size < 2 * own.length, `${views.size} views held for ${own.length} live ones`);
    own.forEach((o, i) => assert.equal(view(o.inst, catalogue(`v2_${i}`)), after[i], 'a live view is never let go'));
    // More builds (new instances) sweep again: only the live views are left.
    const more = Array.from({ length: 20 }, (_, i) => ({ inst: {}, c: catalogue(`more_${i}`) }));
    for (const m of more) instances.add(m.inst);
    for (const m of more) view(m.inst, m.c);
    assert.ok(views.size <= own.length + more.length, `${views.size} views held for ${own.length + more.length} live ones`);
    assert.notEqual(view(gone.inst, gone.c), before[before.length - 1], 'the gone instance’s view was let go');
  });
});
