// The pins view's line diff: every diff rebuilds both sides, keeps as many lines as a longest common
// subsequence has (the table the diff used to fill, kept here as the reference on small inputs), and a
// change beyond its edit bound is shown whole instead of aligned.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineDiff } from '../../../src/admin/line-diff.js';

function lcsLength(a: readonly string[], b: readonly string[]): number {
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  return lcs[0]![0]!;
}

const sides = (diff: string[]) => ({
  a: diff.filter((l) => !l.startsWith('+ ')).map((l) => l.slice(2)),
  b: diff.filter((l) => !l.startsWith('- ')).map((l) => l.slice(2)),
  kept: diff.filter((l) => l.startsWith('  ')).length,
});

describe('lineDiff', () => {
  it('rebuilds both sides and keeps a longest common subsequence (small inputs, every alphabet size)', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let t = 0; t < 2000; t++) {
      const alphabet = 'abcde'.slice(0, 1 + (t % 5));
      const text = () => Array.from({ length: Math.floor(random() * 25) }, () => alphabet[Math.floor(random() * alphabet.length)]!);
      const [a, b] = [text(), text()];
      const s = sides(lineDiff(a, b));
      assert.deepEqual([s.a, s.b, s.kept], [a, b, lcsLength(a, b)], `${a.join('')} → ${b.join('')}`);
    }
  });

  it('marks only the lines that changed in a large definition', () => {
    const a = Array.from({ length: 20_000 }, (_, i) => `"p${i}": "field ${i}",`);
    const b = a.slice();
    b[3] = 'changed';
    b.splice(15_000, 0, 'added');
    const diff = lineDiff(a, b);
    assert.deepEqual(diff.filter((l) => !l.startsWith('  ')), [`- ${a[3]}`, '+ changed', '+ added']);
    assert.deepEqual([sides(diff).a, sides(diff).b], [a, b]);
  });

  it('shows a change of more edits than it aligns as the whole of each side', () => {
    const a = Array.from({ length: 1000 }, (_, i) => `old ${i}`);
    const b = Array.from({ length: 1000 }, (_, i) => `new ${i}`);
    const diff = lineDiff(['same', ...a, 'end'], ['same', ...b, 'end']);
    assert.deepEqual(diff, ['  same', ...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`), '  end']);
  });
});
