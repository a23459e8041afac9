// Upstream-supplied text the CLI prints (tool names, definitions' summaries): nothing a terminal acts on
// or hides gets through raw, and ordinary names are printed as they are.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { terminalJson, terminalLine, terminalText } from '../../../src/observability/terminal-text.js';

const RAW = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

describe('terminal text', () => {
  it('prints an ordinary name as it is', () => {
    for (const name of ['weather', 'gh__create_issue', 'read.file-v2', 'météo', '天気']) assert.equal(terminalText(name), name);
  });

  it('quotes and escapes a name with control, format, space or quote characters, and reads back as the name', () => {
    const names = ['a\u001b[2Jb', 'x\u009b31m', 'admin\u202egnp.exe', 'zero\u200bwidth', 'tag\u{e0041}s', 'two words', 'new\nline', 'sep\u2028x', 'q"uote', 'back\\slash', '', '\u007f'];
    for (const name of names) {
      const out = terminalText(name);
      assert.doesNotMatch(out, RAW, JSON.stringify(name));
      assert.equal(JSON.parse(out), name);
    }
    assert.equal(terminalText('a\u001b[2J'), '"a\\u001b[2J"');
    assert.equal(terminalText('x\u009b'), '"x\\u009b"');
  });

  it('keeps JSON valid and the same value, and a message on one line', () => {
    const value = { 'k\u202e': ['\u001b', '\u0085', '\u{e0001}', 'plain'] };
    const json = terminalJson(JSON.stringify(value, null, 2));
    assert.doesNotMatch(json.replace(/\n/g, ''), RAW);
    assert.deepEqual(JSON.parse(json), value);
    assert.equal(terminalLine('spawn "/x" failed\n\u001b[1mboom'), 'spawn "/x" failed\\u000a\\u001b[1mboom');
  });
});
