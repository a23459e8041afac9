import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countTokens, countToolsListTokens } from '../../bench/tools/tokens.js';

describe('token counter', () => {
  it('counts with the real vocabularies, not a characters-per-token guess', () => {
    // Reference counts published with the encodings: "hello world" is two tokens in both, and OpenAI's
    // cookbook counts "tiktoken is great!" as six cl100k_base tokens.
    assert.equal(countTokens('hello world'), 2);
    assert.equal(countTokens('hello world', 'cl100k_base'), 2);
    assert.equal(countTokens('tiktoken is great!', 'cl100k_base'), 6);
    assert.equal(countTokens(''), 0);
  });

  it('counts text that spells a special token as plain text instead of throwing', () => {
    assert.ok(countTokens('ends with <|endoftext|> here') > 3);
  });

  it('counts a tools/list result as its compact JSON', () => {
    const result = { tools: [{ name: 'echo', description: 'Echoes back the input', inputSchema: { type: 'object' } }] };
    assert.equal(countToolsListTokens(result), countTokens(JSON.stringify(result)));
    assert.ok(countToolsListTokens(result) < countToolsListTokens({ tools: [...result.tools, ...result.tools] }));
  });
});
