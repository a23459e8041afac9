import { MAX_TOOLS_PER_UPSTREAM } from './pin-store.js';
import { shellWord } from './shell-word.js';

/** Why a tool is withheld (the router turns it into the error a call gets). */
export interface PinBlock {
  message: string;
  details: Record<string, unknown>;
}

/** What pinning tells of a withheld tool: its rule, and the hashes an operator needs. */
export type PinBlockDetails = {
  upstream: string;
  tool: string;
  rule: 'pinning.withhold' | 'pinning.pins' | 'pinning.limit' | 'pinning.store-unavailable';
  sha256: string;
  /** The approved definition's hash; null for a tool new since the upstream was pinned. */
  pinnedSha256?: string | null;
  newTool?: boolean;
};

/** A refusal of the tool `details` names, its words made from them (see pinBlockText). */
export function pinBlock(details: PinBlockDetails): PinBlock {
  return { message: pinBlockText(details), details };
}

/**
 * The words of pinning's refusal, from its details alone, so that every refusal says the same of one case.
 * `shown`: the name the caller knows the tool by when a curation rename keeps the upstream's own from its
 * view (the list, search and every other refusal keep it too). The words then name neither that name nor
 * what names it (the approve command, the config pin's path): the operator finds the tool with
 * `switchboard pins list` by its hash.
 */
export function pinBlockText(d: Readonly<Record<string, unknown>>, shown?: string): string {
  const upstream = String(d.upstream);
  const own = String(d.tool);
  const head = `Tool "${shown ?? own}" of upstream "${upstream}" is withheld`;
  switch (d.rule) {
    case 'pinning.limit':
      return `${head}: it is a new tool and the upstream already has ${MAX_TOOLS_PER_UPSTREAM} tools recorded (the most the gateway records per upstream); review the upstream`;
    case 'pinning.store-unavailable':
      return `${head} for now: ${d.newTool === true ? 'it is a new tool' : 'its definition changed'} and cannot be checked against the upstream's pins (the pin store is unavailable); retry shortly`;
    case 'pinning.pins':
      return `${head}: its definition does not match its pin in the gateway's config${shown === undefined ? ` (pinning.pins.${upstream}.${own})` : ''}; an operator must review the change and update that pin`;
  }
  const what = d.newTool === true ? "it is a new tool, which appeared after the upstream's tools were pinned" : 'its definition changed since it was pinned';
  const approve = shown === undefined ? `approve it with "switchboard pins approve ${shellWord(upstream)} ${shellWord(own)} --hash ${String(d.sha256)}"` : `review it ("switchboard pins list") and approve the definition with hash ${String(d.sha256)}`;
  return `${head}: ${what}; an operator must ${approve}`;
}
