// Replicas without a gateway: Cluster instances on one Redis, with no local routes (a request forwarded to
// one of them fails), for tests of ownership, forwarding and takeover between replicas.
import { Cluster } from '../../src/cluster/cluster.js';
import type { RedisConfig } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';

const noRoutes = async (): Promise<never> => {
  throw new Error('no local routes in this test');
};

/** `n` replicas sharing `cfg` (its Redis and key prefix), each started. */
export async function startBareReplicas(cfg: RedisConfig, n: number): Promise<Cluster[]> {
  const replicas: Cluster[] = [];
  for (let i = 0; i < n; i++) {
    const replica = new Cluster(cfg, { perStream: 10, bytesPerSession: 1 << 20 }, createLogger('silent'));
    await replica.start(noRoutes, 65536);
    replicas.push(replica);
  }
  return replicas;
}
