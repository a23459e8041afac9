import { isJsonObject } from '../jsonrpc/types.js';
import type { CompletionReader } from './completion-values.js';

type Result = Record<string, unknown>;

/** Whether a content item of a read of `asked` may be shown: the URI asked was judged before the read; another is judged now. */
function shown(guard: CompletionReader, asked: unknown, item: unknown): boolean {
  const uri = isJsonObject(item) ? item.uri : undefined;
  return typeof uri !== 'string' || uri === asked || guard.mayRead(uri);
}

/**
 * A resources/read result as the tenant may see it. A read may answer the contents of several URIs (a
 * directory its files, the spec allows it), and only the URI asked was judged: a tenant denied
 * file:///dir/secret* read file:///dir/secret/key.txt by reading file:///dir, though a read of it, a list and
 * its updates (judged by the updated URI itself) all hide it. An item under a URI the rules deny is left out,
 * as a list leaves it out (one in no normal form too: a list shows only what can be read); the item of the
 * URI asked stays, however the rules would judge its spelling. Nothing left out: the result as it came.
 */
export function shownContents(guard: CompletionReader, params: Result | undefined, result: Result): Result {
  const contents = result.contents;
  if (guard.tenant.filtersNothing || !Array.isArray(contents)) return result;
  const asked = params?.uri;
  // Checked first without allocating: every read of one URI answered as asked passes here.
  if (contents.every((item: unknown) => shown(guard, asked, item))) return result;
  return { ...result, contents: contents.filter((item: unknown) => shown(guard, asked, item)) };
}
