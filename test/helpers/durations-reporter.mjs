// A node:test reporter for `node test/run.mjs --record-durations`: notes each test file's whole time (the
// runner's own test for the file, named by its path, start-up included; the tests inside may be defined
// in a shared helper, whose path their events carry) and appends one JSON line per file to the path in
// SWB_DURATIONS_OUT, which run.mjs folds into test/durations.json. It writes nothing to its own stream.
import { appendFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

export default async function* durationsReporter(source) {
  const lines = [];
  for await (const { type, data } of source) {
    if (type === 'test:complete' && data.nesting === 0 && data.file && resolve(data.name) === data.file) {
      lines.push(JSON.stringify([relative(process.cwd(), data.file), Math.round(data.details.duration_ms)]));
    }
  }
  if (lines.length > 0) appendFileSync(process.env.SWB_DURATIONS_OUT, `${lines.join('\n')}\n`);
}
