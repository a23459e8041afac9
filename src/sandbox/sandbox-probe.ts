import { spawn } from 'node:child_process';
import { GatewayError } from '../errors.js';
import type { LaunchPlan } from './launch-plan.js';

const PROBE_TIMEOUT_MS = 10_000;

/**
 * Runs a plan's harmless probe command in exactly the sandbox the server would get, once per distinct
 * sandbox. A host without bubblewrap's namespaces (a container without user namespaces, a kernel that
 * forbids them) fails here with bubblewrap's own explanation, and the server is never started
 * unconfined. Only successes are remembered: a host that is fixed is noticed at the next restart.
 */
export class SandboxProbe {
  readonly #passed = new Set<string>();
  readonly #running = new Map<string, Promise<void>>();

  check(upstream: string, plan: LaunchPlan): Promise<void> {
    const probe = plan.probe;
    if (!probe) return Promise.resolve();
    const key = JSON.stringify([probe.file, probe.args, plan.pooledUser ? 'pooled' : plan.uid, plan.gid]);
    if (this.#passed.has(key)) return Promise.resolve();
    let running = this.#running.get(key);
    if (!running) {
      running = run(upstream, plan, probe).then(() => void this.#passed.add(key)).finally(() => this.#running.delete(key));
      this.#running.set(key, running);
    }
    return running;
  }
}

function run(upstream: string, plan: LaunchPlan, probe: { file: string; args: string[] }): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (why: string) =>
      reject(
        new GatewayError(
          'SWB_SANDBOX_UNAVAILABLE',
          `upstream "${upstream}" does not start: its ${plan.profile} sandbox cannot be set up here: ${why}` +
            (plan.profile === 'bubblewrap' ? ' (bubblewrap needs unprivileged user namespaces; where they are unavailable, as in most Kubernetes pods, use `sandbox: { type: limits }`)' : ''),
          { upstream },
        ),
      );
    let child;
    try {
      child = spawn(probe.file, probe.args, { env: plan.env, uid: plan.uid, gid: plan.gid, stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      fail((err as Error).message);
      return;
    }
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(0, 2000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      fail(err.message);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else fail(stderr.trim().split('\n')[0] || `the probe exited with ${signal ?? `code ${code}`}`);
    });
  });
}
