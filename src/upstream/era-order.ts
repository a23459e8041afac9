import type { UpstreamConfig } from '../config/schema.js';

/** The era each upstream (its config) turned out to speak: later starts try it first, and only re-probe if it fails. */
const LEARNED_ERA = new WeakMap<UpstreamConfig, 'legacy' | 'modern'>();

/**
 * Which eras to try, in order. A stdio upstream is asked initialize first (nearly all speak 2025, and
 * a modern-only one refuses initialize at once, while a legacy one may never answer server/discover);
 * an HTTP upstream is asked server/discover first (a legacy server refuses it at once).
 */
export function eraOrder(config: UpstreamConfig): Array<'legacy' | 'modern'> {
  if (config.era !== 'auto') return [config.era];
  if (config.transport === 'sse') return ['legacy'];
  const learned = LEARNED_ERA.get(config);
  const natural: Array<'legacy' | 'modern'> = config.transport === 'stdio' ? ['legacy', 'modern'] : ['modern', 'legacy'];
  return learned && learned !== natural[0] ? [learned, natural[0]!] : natural;
}

/** What a start found the upstream to speak. */
export function learnEra(config: UpstreamConfig, era: 'legacy' | 'modern'): void {
  LEARNED_ERA.set(config, era);
}
