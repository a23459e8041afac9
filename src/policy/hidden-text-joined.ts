import { REMOVED, type HiddenTextScanner } from './hidden-text.js';

/**
 * Patterns across the text items of one result that a model reads as one text. Each string is scanned on
 * its own first (hidden characters, patterns); then each run of adjacent text items of a result's
 * `content` (tools/call: `text` items and embedded resources' `text`) or `contents` (resources/read: text
 * contents) is joined in order with nothing between them, as a model given the blocks one after another
 * reads them, and the patterns are matched again on that. Only matches that span two items count: one
 * inside an item was found (and, cleaned, replaced) when the item was scanned, so nothing is reported
 * twice. Any other item (an image, audio, a link, a blob) ends a run. One pass over the run's text: linear.
 */

type Item = Record<string, unknown>;

/** Where in the result the runs are read, and what their finding's path says. */
const LISTS = ['content', 'contents'] as const;
const JOINED = ' (text items read as one)';

/** The text a model reads of an item, or undefined when it is not a text item (it ends a run). */
function textOf(item: unknown): string | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
  const o = item as Item;
  if (typeof o.text === 'string' && (o.type === undefined || o.type === 'text')) return o.text;
  const r = o.resource;
  if (o.type === 'resource' && r !== null && typeof r === 'object' && typeof (r as Item).text === 'string') return (r as Item).text as string;
  return undefined;
}

/** A copy of a text item with other text (own members kept as they are, "__proto__" included). */
function withText(item: Item, text: string): Item {
  if (typeof item.text === 'string') return { ...item, text };
  return { ...item, resource: { ...(item.resource as Item), text } };
}

/** The matches of `joined` that span two items (`ends`: where each item ends in it), in order. */
function spanning(scanner: HiddenTextScanner, joined: string, ends: readonly number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let k = 0;
  for (const [start, end] of scanner.matches(joined) ?? []) {
    if (end === start) continue;
    while (ends[k]! <= start) k++;
    if (end > ends[k]!) out.push([start, end]);
  }
  return out;
}

/** One run's texts with each spanning match replaced: REMOVED where it starts, its other parts cut out. */
function cut(joined: string, ends: readonly number[], matches: ReadonlyArray<[number, number]>): string[] {
  const out: string[] = [];
  let r = 0;
  let pos = 0;
  for (const end of ends) {
    let text = '';
    while (pos < end) {
      while (r < matches.length && matches[r]![1] <= pos) r++;
      const m = matches[r];
      if (m === undefined || m[0] >= end) {
        text += joined.slice(pos, end);
        pos = end;
        break;
      }
      if (m[0] > pos) text += joined.slice(pos, m[0]);
      if (m[0] >= pos) text += REMOVED;
      pos = Math.min(m[1], end);
    }
    out.push(text);
  }
  return out;
}

/** A list's runs of text items: how many matches span items, and the list with them removed. */
function joinList(scanner: HiddenTextScanner, list: readonly unknown[]): { list: unknown[]; count: number } | undefined {
  let copy: unknown[] | undefined;
  let count = 0;
  for (let i = 0; i < list.length; ) {
    const texts: string[] = [];
    for (let t = textOf(list[i]); t !== undefined; t = textOf(list[i + texts.length])) texts.push(t);
    if (texts.length > 1) {
      const ends: number[] = [];
      let at = 0;
      for (const t of texts) ends.push((at += t.length));
      const joined = texts.join('');
      const matches = spanning(scanner, joined, ends);
      if (matches.length > 0) {
        count += matches.length;
        copy ??= list.slice();
        const clean = cut(joined, ends, matches);
        for (let k = 0; k < texts.length; k++) if (clean[k] !== texts[k]) copy[i + k] = withText(list[i + k] as Item, clean[k]!);
      }
    }
    i += Math.max(texts.length, 1);
  }
  return copy === undefined ? undefined : { list: copy, count };
}

/** The pattern matches across a result's adjacent text items (a finding per list), and the result with them removed. */
export function acrossItems(scanner: HiddenTextScanner, result: unknown): { found: Array<{ path: string; count: number }>; clean: unknown } {
  const found: Array<{ path: string; count: number }> = [];
  if (!scanner.patterned || result === null || typeof result !== 'object' || Array.isArray(result)) return { found, clean: result };
  let clean = result as Item;
  for (const key of LISTS) {
    const list = clean[key];
    if (!Array.isArray(list)) continue;
    const joined = joinList(scanner, list);
    if (joined === undefined) continue;
    found.push({ path: key + JOINED, count: joined.count });
    clean = { ...clean, [key]: joined.list };
  }
  return { found, clean };
}
