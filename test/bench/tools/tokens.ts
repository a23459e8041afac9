/**
 * Token counts with a real BPE tokenizer (gpt-tokenizer), so "search mode saves N tokens" is measured
 * rather than guessed from character counts.
 *
 * What is counted is the compact JSON of a tools/list result. Each model provider renders tool
 * definitions into its prompt in its own way, so this is not any one provider's bill; it is the same
 * yardstick applied to `all` and `search` mode, which is what the comparison needs.
 */
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

/** o200k_base is the GPT-4o / GPT-4.1 / o-series vocabulary; cl100k_base the GPT-4 / GPT-3.5 one. */
export type Encoding = 'o200k_base' | 'cl100k_base';

const COUNTERS = { o200k_base: countO200k, cl100k_base: countCl100k } as const;

/**
 * Text that happens to spell a special token (`<|endoftext|>`) is counted as ordinary text, as an API
 * would treat it inside a tool description, instead of making the tokenizer throw.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export function countTokens(text: string, encoding: Encoding = 'o200k_base'): number {
  return COUNTERS[encoding](text, PLAIN_TEXT);
}

/** Tokens of a tools/list result (`{ tools, nextCursor? }`) serialized as it goes over the wire. */
export function countToolsListTokens(result: { tools: readonly unknown[]; nextCursor?: string }, encoding: Encoding = 'o200k_base'): number {
  return countTokens(JSON.stringify(result), encoding);
}
