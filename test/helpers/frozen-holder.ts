// Two replicas on a redis-server of their own, with the admin API on, for tests that freeze one of them
// (SIGSTOP) while the other is asked to act on what the frozen one holds: its heartbeat outlives the test
// (a minute) and the wait for replicas' answers is short (500 ms), so the frozen one is still counted
// alive and never answers. The asker's log is collected.
import { after, before } from 'node:test';
import { startRedis, type TestRedis } from './redis.js';
import { startReplicaFrom, startReplicas, writeEverythingConfig, type Replica } from './replicas.js';

export interface FrozenHolderPair {
  holder: Replica;
  asker: Replica;
  /** The asker's standard output so far. */
  log: () => string;
  /** A request to `r`'s admin API with the pair's token: its status and JSON body. */
  admin: (r: Replica, method: string, path: string) => Promise<{ status: number; body: any }>;
}

/** For a describe: started before its tests (the fields are set then), both killed (and resumed first) after them. */
export function frozenHolderPair(prefix: string, token: string): FrozenHolderPair {
  let redis: TestRedis | undefined;
  let replicas: Replica[] = [];
  let log = '';
  const pair = {
    log: () => log,
    admin: async (r: Replica, method: string, path: string) => {
      const res = await fetch(new URL(path, r.admin), { method, headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(30_000) });
      return { status: res.status, body: await res.json() };
    },
  } as FrozenHolderPair;
  before(async () => {
    redis = await startRedis();
    const store = `{ redis: { url: "${redis.url}", heartbeatMs: 200, replicaTtlMs: 60000, forwardTimeoutMs: 500 } }`;
    const extraYaml = `admin: { enabled: true, port: 0, token: "${token}" }\n`;
    replicas = await startReplicas([`${prefix}-holder`, `${prefix}-asker`].map((n) => startReplicaFrom(n, writeEverythingConfig(n, { store, extraYaml }))));
    [pair.holder, pair.asker] = replicas as [Replica, Replica];
    pair.asker.child.stdout!.on('data', (b: Buffer) => (log += b.toString()));
  });
  after(async () => {
    for (const r of replicas) {
      r.child.kill('SIGCONT');
      r.child.kill('SIGKILL');
    }
    await redis?.stop();
  });
  return pair;
}
