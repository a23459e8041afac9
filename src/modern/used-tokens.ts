/**
 * What makes a requestState single use: each sealed state has an id, and the first retry that presents
 * it claims the id. The integrity check alone cannot stop a replay within the expiry (the spec's warning
 * on requestState); this record can. Implementations: MemoryUsedTokens (one replica) and
 * RedisUsedTokens (src/cluster, shared by replicas).
 */
export interface UsedTokens {
  /**
   * Records `id` as used until `expiresAt` (epoch ms; the state is refused as expired after it, so
   * nothing needs remembering longer). Resolves false when the id was claimed before: a replay. Rejects
   * (SWB_STORE_UNAVAILABLE) when it cannot tell; the state is then left unclaimed, never accepted.
   */
  claim(id: string, expiresAt: number): Promise<boolean>;
  /**
   * Whether `id` was claimed (a read: claims nothing). Asked only where the edge refuses a retry carrying a
   * state another replica holds, to tell a replay from a retry (see ModernService.answersRound). Rejects
   * when it cannot tell.
   */
  claimed(id: string): Promise<boolean>;
}
