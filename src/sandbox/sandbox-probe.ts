import { GatewayError } from '../errors.js';
import { spawnHelper } from './inherited-descriptors.js';
import type { LaunchPlan } from './launch-plan.js';

const PROBE_TIMEOUT_MS = 10_000;

/** The probe's environment: nothing of any one upstream, so that its result belongs to the sandbox alone. */
const PROBE_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/**
 * Runs a plan's harmless probe command in exactly the sandbox the server would get, once per distinct
 * sandbox (program, arguments with every mount, user). A host without bubblewrap's namespaces (a
 * container without user namespaces, a kernel that forbids them) fails here with bubblewrap's own
 * explanation, and the server is never started unconfined. Only successes are remembered: a host that is
 * fixed is noticed at the next restart.
 *
 * Several upstreams with the same sandbox share one probe in flight, so its failure names none of them:
 * it is the sandbox's reason, and each caller wraps it in a refusal of its own (SandboxRefusal).
 */
export class SandboxProbe {
  readonly #passed = new Set<string>();
  readonly #running = new Map<string, Promise<void>>();

  check(plan: LaunchPlan): Promise<void> {
    const probe = plan.probe;
    if (!probe) return Promise.resolve();
    const key = JSON.stringify([probe.file, probe.args, plan.pooledUser ? 'pooled' : plan.uid, plan.gid]);
    if (this.#passed.has(key)) return Promise.resolve();
    let running = this.#running.get(key);
    if (!running) {
      running = run(plan, probe).then(() => void this.#passed.add(key)).finally(() => this.#running.delete(key));
      this.#running.set(key, running);
    }
    return running;
  }
}

/**
 * A hint that matches the cause. bubblewrap reports every failure with exit code 1 and one line of text,
 * so its words are all there is to go by: user namespaces are blamed only when it names them.
 */
export function hintFor(profile: LaunchPlan['profile'], why: string, user: string): string {
  if (profile === 'bubblewrap' && /namespace|uid map|gid map|setgroups/i.test(why)) {
    return ' (bubblewrap needs unprivileged user namespaces; where they are unavailable, as in most Kubernetes pods, use `sandbox: { type: limits }`)';
  }
  // EACCES on a path it mounts or enters (bubblewrap: "Can't find source path …: Permission denied").
  if (/permission denied/i.test(why)) {
    return ` (the sandbox user ${user} may not reach a path the sandbox needs: every directory above a declared path and the working directory needs search permission for it)`;
  }
  return '';
}

function run(plan: LaunchPlan, probe: { file: string; args: string[] }): Promise<void> {
  const user = `${plan.uid ?? 'of the gateway'}${plan.gid === undefined ? '' : `:${plan.gid}`}`;
  return new Promise((resolve, reject) => {
    const fail = (why: string) =>
      reject(new GatewayError('SWB_SANDBOX_UNAVAILABLE', `its ${plan.profile} sandbox cannot be set up here: ${why}${hintFor(plan.profile, why, user)}`, { profile: plan.profile }));
    let child;
    try {
      child = spawnHelper(probe.file, probe.args, { env: PROBE_ENV, uid: plan.uid, gid: plan.gid, stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      fail((err as Error).message);
      return;
    }
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(0, 2000)));
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
