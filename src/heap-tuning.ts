import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring for the gateway process, unless
 * SWITCHBOARD_V8_PRETENURING=on. V8 watches how many objects of each object or array literal survive a
 * young-generation GC and, above 85 %, allocates that literal in the old generation from then on, for
 * good. A gateway's request objects die with their call, but in a burst (the first calls after start,
 * clients reconnecting after a deploy) most of them are in flight at a scavenge: a gateway started
 * under load tenured dozens of sites in its first scavenges at 96–100 % survival. From then on each such
 * object is allocated old, dies there, and until a major GC collects it keeps every young object it
 * points to alive through scavenges, which promotes those too: 190 MB promoted per 120,000 JSON-session
 * calls (254 MB for 2026-07-28 calls) with pretenuring, 137 MB (85 MB) without, and fewer major GCs.
 * Node reads V8 flags from its command line only (NODE_OPTIONS refuses this one), hence set here.
 */
export function tuneHeap(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.SWITCHBOARD_V8_PRETENURING === 'on') return false;
  setFlagsFromString('--no-allocation-site-pretenuring');
  return true;
}

// On import: main.ts imports this module first, so that the flag is set before the rest of the gateway's
// modules are evaluated (V8 already decided for some sites while they loaded when it was set later).
tuneHeap();
