import { setTimeout as sleep } from 'node:timers/promises';
import type { Ledger } from './ledger.js';
import type { SoakCluster, SoakReplica } from './soak-cluster.js';
import type { Verifier } from './verifier.js';

type Fault = 'kill -9 replica' | 'SIGTERM replica' | 'kill upstream' | 'SIGSTOP redis' | 'restart redis' | 'drop client stream';

const FAULTS: readonly Fault[] = ['kill -9 replica', 'SIGTERM replica', 'kill upstream', 'SIGSTOP redis', 'restart redis', 'drop client stream'];

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

/**
 * The scheduler: one fault at a time, at random, every few seconds, until `deadline` or `maxFaults`. Every
 * replica killed or stopped is replaced at once (three stay up), and each fault is written to the ledger
 * with the window it covered.
 */
export class Chaos {
  readonly #cluster: SoakCluster;
  readonly #ledger: Ledger;
  readonly #droppers: Verifier[];

  constructor(cluster: SoakCluster, ledger: Ledger, droppers: Verifier[]) {
    this.#cluster = cluster;
    this.#ledger = ledger;
    this.#droppers = droppers;
  }

  async run(deadline: number, maxFaults: number): Promise<void> {
    await sleep(3000); // traffic first
    for (let n = 0; n < maxFaults && Date.now() < deadline - 5000; n++) {
      const fault = FAULTS[n % FAULTS.length] === 'kill -9 replica' ? 'kill -9 replica' : pick(FAULTS);
      await this.#cause(fault);
      await sleep(2500 + Math.random() * 3500);
    }
  }

  async #cause(fault: Fault): Promise<void> {
    const from = Date.now();
    const victim = pick(this.#cluster.live());
    switch (fault) {
      case 'kill -9 replica': {
        // In flight on it: whatever reached it before it was gone (its exit seen here).
        await this.#cluster.signal(victim, 'SIGKILL');
        this.#ledger.fault(fault, from, victim.name, Date.now());
        await this.#cluster.add();
        return;
      }
      case 'SIGTERM replica': {
        // A rolling restart: the new replica first, then the old one drains and hands over.
        const fresh = await this.#cluster.add();
        const t = Date.now();
        const code = await this.#cluster.signal(victim, 'SIGTERM');
        this.#ledger.fault(fault, t, `${victim.name} exit ${code}, replaced by ${fresh.name}`, Date.now());
        return;
      }
      case 'kill upstream':
        return this.#killUpstream(victim, from);
      case 'SIGSTOP redis': {
        this.#cluster.redis.pause();
        await sleep(1000 + Math.random() * 1500);
        this.#cluster.redis.resume();
        this.#ledger.fault(fault, from, `frozen, then SIGCONT; all ready after ${await this.#cluster.ready()} ms`, Date.now());
        return;
      }
      case 'restart redis': {
        await this.#cluster.redis.restart();
        this.#ledger.fault(fault, from, `killed and started empty; all ready after ${await this.#cluster.ready()} ms`, Date.now());
        return;
      }
      case 'drop client stream': {
        await pick(this.#droppers).dropMidCall();
        this.#ledger.fault(fault, from, 'a call aborted by its client mid-flight', from);
      }
    }
  }

  async #killUpstream(victim: SoakReplica, from: number): Promise<void> {
    const pids = this.#cluster.children(victim);
    if (pids.length === 0) return;
    const pid = pick(pids);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    // Over when the replica's shared upstream answers again (a pool of one restarts with backoff).
    const ms = await this.#cluster.answering(victim);
    this.#ledger.fault('kill upstream', from, `pid ${pid} of ${victim.name}; answering again after ${ms} ms`, Date.now());
  }
}
