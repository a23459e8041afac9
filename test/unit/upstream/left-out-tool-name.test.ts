// A tool left out of an upstream's list (task-only) is warned about once, by name, and the name is kept to
// know it again: up to MAX_WARNED_TOOLS of them per upstream. The name is the upstream's, of any length, and
// was logged and kept whole: 1000 one-megabyte names held 1 GB for the upstream's life, and as many log
// lines as large. Other warnings about an upstream's tool names cut them at 128 characters (MCP's bound);
// this one now does too. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import { taskOnly, withoutTools } from '../../../src/upstream/left-out-tools.js';

describe('a left-out tool\'s name in its warning', () => {
  it('is cut at 128 characters, in the line and in what is remembered', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const warned = new Set<string>();
    const long = 'x'.repeat(100_000);
    const result = { tools: [{ name: long, execution: { taskSupport: 'required' } }, { name: 'kept' }] };
    const out = withoutTools(result, 'u', logger, warned, taskOnly);
    assert.deepEqual((out.tools as Array<{ name: string }>).map((t) => t.name), ['kept']);
    assert.equal(lines.length, 1);
    assert.ok(lines[0]!.length < 2048, `a warning line of ${lines[0]!.length} characters`);
    assert.equal((JSON.parse(lines[0]!) as { tool: string }).tool, `${'x'.repeat(128)}…`);
    assert.ok([...warned].every((k) => k.length < 512), 'the whole name is remembered');
    withoutTools(result, 'u', logger, warned, taskOnly);
    assert.equal(lines.length, 1, 'warned about again');
  });
});
