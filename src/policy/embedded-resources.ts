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
 * A sampling message's content item as the tenant may see it: a tool_result's content judged as a tool's is
 * (the tool_result itself kept, emptied too: the tool_use before it names it); any other item as a prompt's.
 */
function shownSamplingItem(guard: CompletionReader, item: unknown): unknown {
  if (!isJsonObject(item) || item.type !== 'tool_result' || !Array.isArray(item.content)) return shown(guard, item) ? item : undefined;
  const first = firstWithheld(guard, item.content);
  return first < 0 ? item : { ...item, content: kept(guard, item.content, first) };
}

/** A sampling message as the tenant may see it (as shownMessage, its items by shownSamplingItem). */
function shownSamplingMessage(guard: CompletionReader, message: unknown): unknown {
  const content = isJsonObject(message) ? message.content : undefined;
  if (!Array.isArray(content)) {
    const item = shownSamplingItem(guard, content);
    return item === content ? message : item === undefined ? undefined : { ...(message as Result), content: item };
  }
  let i = 0;
  let c: unknown;
  for (; i < content.length; i++) if ((c = shownSamplingItem(guard, content[i])) !== content[i]) break;
  if (i === content.length) return message;
  const out = content.slice(0, i);
  if (c !== undefined) out.push(c);
  for (i++; i < content.length; i++) if ((c = shownSamplingItem(guard, content[i])) !== undefined) out.push(c);
  return out.length === 0 ? undefined : { ...(message as Result), content: out };
}

/**
 * An upstream's sampling/createMessage as the tenant may be asked it. Its messages are what the client's
 * model reads and what a person approving the request sees, and an upstream may put a resource in them as
 * in a tool's result: inside a tool_result (as the protocol allows), or as an item of its own (as a client
 * not checking the schema takes). Before 2026-12-07 they were relayed as written: a tenant denied
 * file:///secrets/* was shown file:///secrets/key.txt by any upstream that asked its client to sample over it.
 * Left out as shownEmbedded leaves them out; nothing left out: the params as they came, not copied.
 */
export function shownSampling(guard: CompletionReader, params: Result): Result {
  const messages = params.messages;
  if (guard.tenant.filtersNothing || !Array.isArray(messages)) return params;
  let i = 0;
  let m: unknown;
  for (; i < messages.length; i++) if ((m = shownSamplingMessage(guard, messages[i])) !== messages[i]) break;
  if (i === messages.length) return params;
  const out = messages.slice(0, i);
  if (m !== undefined) out.push(m);
  for (i++; i < messages.length; i++) if ((m = shownSamplingMessage(guard, messages[i])) !== undefined) out.push(m);
  return { ...params, messages: out };
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
