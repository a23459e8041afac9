import { isJsonObject } from '../jsonrpc/types.js';
import { uriProblem } from './normalize-uri.js';
import { expandTemplate } from './template-expansion.js';

type Result = Record<string, unknown>;

/** What of a session's guard this asks (SessionGuard, which calls it: named here so neither imports the other). */
export interface CompletionReader {
  readonly tenant: { readonly filtersNothing: boolean };
  mayRead(uri: unknown): boolean;
}

/**
 * A completion/complete result on a resource template as the tenant may see it: a value whose URI (the
 * template with the value, and the other variables as the request's context gives them) the tenant's
 * resource rules deny is left out, as resources/list leaves that URI out and a read of it answers "not
 * found" (listed, "admin" of users://{userId}/profile named a resource a deny of users://admin/* hides).
 * A value whose URI cannot be told (a variable the context does not give) is kept: it names no one URI.
 * A URI not in normal form is the read's own refusal, not a rule's, and keeps its value too. Once a value
 * is left out, `total` counts only what is shown, or is dropped when there are more values than shown.
 */
export function shownCompletion(guard: CompletionReader, params: Result | undefined, result: Result): Result {
  const ref = params?.ref as Result | undefined;
  const completion = result.completion;
  if (ref?.type !== 'ref/resource' || typeof ref.uri !== 'string' || guard.tenant.filtersNothing || !isJsonObject(completion) || !Array.isArray(completion.values)) return result;
  const argument = params?.argument as Result | undefined;
  const context = (params?.context as { arguments?: Record<string, string> } | undefined)?.arguments;
  const name = argument?.name;
  if (typeof name !== 'string') return result;
  const template = ref.uri;
  const values = completion.values.filter((v: unknown) => {
    if (typeof v !== 'string') return true;
    const uri = expandTemplate(template, { ...context, [name]: v });
    return uri === undefined || uriProblem(uri) !== undefined || guard.mayRead(uri);
  });
  if (values.length === completion.values.length) return result;
  const { total: _total, ...rest } = completion;
  const shown: Result = { ...rest, values };
  if (completion.hasMore !== true) shown.total = values.length;
  return { ...result, completion: shown };
}
