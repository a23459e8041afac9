/**
 * `node --import tsx test/bench/tools/misses.ts [--all]`
 *
 * Every corpus query whose expected tool is not ranked first (with --all: every query), with where the
 * first expected tool ranks, the expected tools and the top five returned: what a miss audit reads.
 */
import { parseArgs } from 'node:util';
import { expectedNames } from './corpus.js';
import { isTuning, measureRetrieval } from './retrieval.js';

const { values: args } = parseArgs({ options: { all: { type: 'boolean', default: false } } });
const r = measureRetrieval();
for (const o of r.outcomes) {
  if (!args.all && o.rank === 1) continue;
  const half = isTuning(o.query) ? 'T' : 'H';
  process.stdout.write(`${o.query.id} ${half} [${o.query.group}] rank ${o.rank ?? '-'}: ${o.query.query}\n`);
  process.stdout.write(`  want: ${expectedNames(o.query).join(', ')}\n`);
  o.top.forEach((n, i) => process.stdout.write(`  ${i + 1}. ${n}\n`));
}
