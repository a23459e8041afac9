// search_tools' answer is held to tools.maxSearchAnswerChars: what fits in full, then without input
// schemas, then left out, in rank order, the note saying so (src/session/search-answer.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { searchAnswer } from '../../../src/session/search-answer.js';

const tool = (name: string, schemaChars: number, description = `Does ${name}.`) => ({ name, description, inputSchema: { type: 'object', description: 'x'.repeat(schemaChars) } });

describe('searchAnswer', () => {
  it('an answer that fits is the matches as they are, its text their JSON', () => {
    const found = [tool('a', 10), tool('b', 10)];
    const r = searchAnswer(found, 4096);
    assert.deepEqual(r.tools, found);
    assert.equal(r.note, undefined);
    assert.deepEqual(JSON.parse(r.text), { tools: found });
  });

  it('too large: best first in full, then without schemas, then left out, within the cap', () => {
    const found = [tool('top', 1000), tool('huge', 10_000), ...Array.from({ length: 48 }, (_, i) => tool(`t${i}`, 50, 'd'.repeat(500)))];
    const r = searchAnswer(found, 4096);
    assert.ok(r.text.length <= 4096, `${r.text.length}`);
    assert.deepEqual(JSON.parse(r.text), { tools: r.tools, note: r.note });
    assert.deepEqual(r.tools[0], found[0], 'the best match whole');
    assert.deepEqual(r.tools[1], { name: 'huge', description: 'Does huge.', schemaOmitted: true });
    const left = found.length - r.tools.length;
    assert.ok(left > 0, 'some are left out');
    assert.deepEqual(r.tools.map((t) => t.name), found.map((t) => t.name).slice(0, r.tools.length), 'in rank order, none skipped before the cut');
    const cut = r.tools.filter((t) => t.schemaOmitted === true).length;
    assert.match(r.note!, new RegExp(`cut to 4096 characters .*: ${cut} matches are listed without their input schema .* and ${left} more left out`));
  });

  it('a match whose texts are long keeps 200 characters of each', () => {
    const r = searchAnswer([{ name: 'a', title: 't'.repeat(5000), description: 'd'.repeat(5000), inputSchema: { type: 'object', description: 'x'.repeat(10_000) } }], 4096);
    assert.equal(r.tools[0]!.title, `${'t'.repeat(200)}…`);
    assert.equal(r.tools[0]!.description, `${'d'.repeat(200)}…`);
    assert.equal(r.tools[0]!.inputSchema, undefined);
  });
});
