import { isJsonObject } from '../jsonrpc/types.js';
import type { CompletionReader } from './completion-values.js';

type Result = Record<string, unknown>;

/** The URI a content item names: an embedded resource's (`resource.uri`), a resource link's (`uri`); else undefined. */
function namedUri(item: unknown): unknown {
  if (!isJsonObject(item)) return undefined;
  if (item.type === 'resource') return isJsonObject(item.resource) ? item.resource.uri : undefined;
  return item.type === 'resource_link' ? item.uri : undefined;
}

/** Whether the tenant may be shown a content item: one naming no URI string (text, an image, a malformed item) is not judged, as in read-contents.ts. */
function shown(guard: CompletionReader, item: unknown): boolean {
  const uri = namedUri(item);
  return typeof uri !== 'string' || guard.mayRead(uri);
}

/** The index of the first item the tenant may not be shown, -1 when none: a loop, so a result that passes allocates nothing. */
function firstWithheld(guard: CompletionReader, items: readonly unknown[]): number {
  for (let i = 0; i < items.length; i++) if (!shown(guard, items[i])) return i;
  return -1;
}

/** `items` without those the tenant may not be shown, `first` (the first of them) known. */
function kept(guard: CompletionReader, items: readonly unknown[], first: number): unknown[] {
  const out = items.slice(0, first);
  for (let i = first + 1; i < items.length; i++) if (shown(guard, items[i])) out.push(items[i]);
  return out;
}

/**
 * A prompt message as the tenant may see it: the message itself when nothing in it is withheld; undefined when
 * all it holds is (its one content item, or every item of an array); else a copy holding what is shown.
 */
function shownMessage(guard: CompletionReader, message: unknown): unknown {
  const content = isJsonObject(message) ? message.content : undefined;
  if (!Array.isArray(content)) return shown(guard, content) ? message : undefined;
  const first = firstWithheld(guard, content);
  if (first < 0) return message;
  const rest = kept(guard, content, first);
  return rest.length === 0 ? undefined : { ...(message as Result), content: rest };
}

function shownMessages(guard: CompletionReader, result: Result): Result {
  const messages = result.messages;
  if (!Array.isArray(messages)) return result;
  let i = 0;
  let m: unknown;
  for (; i < messages.length; i++) if ((m = shownMessage(guard, messages[i])) !== messages[i]) break;
  if (i === messages.length) return result;
  const out = messages.slice(0, i);
  if (m !== undefined) out.push(m);
  for (i++; i < messages.length; i++) if ((m = shownMessage(guard, messages[i])) !== undefined) out.push(m);
  return { ...result, messages: out };
}

/**
 * A tools/call or prompts/get result as the tenant may see it. An upstream may embed a resource's contents
 * (`{type: "resource", resource: {uri, text|blob}}`) or link one (`{type: "resource_link", uri}`) in a tool's
 * content or a prompt's messages, and only the tool or prompt was judged: a tenant denied file:///secrets/*
 * read file:///secrets/key.txt through any tool or prompt that embedded it, though a read of it answers "not
 * found". An item under a URI the tenant may not read (or in no normal form) is left out, as a read leaves out
 * such contents (read-contents.ts) and a list such URIs: a text saying so would tell the tenant what the
 * "not found" of a read hides. A prompt message is left out with the one item it holds. Nothing left out
 * (or a tenant whose rules filter nothing): the result as it came, not copied.
 */
export function shownEmbedded(guard: CompletionReader, method: 'tools/call' | 'prompts/get', result: Result): Result {
  if (guard.tenant.filtersNothing) return result;
  if (method === 'prompts/get') return shownMessages(guard, result);
  const content = result.content;
  if (!Array.isArray(content)) return result;
  const first = firstWithheld(guard, content);
  return first < 0 ? result : { ...result, content: kept(guard, content, first) };
}
