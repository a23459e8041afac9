// Running the gateway image under podman the way the Helm chart runs it in a pod: uid 10001, read-only
// root filesystem with a writable /tmp, every capability dropped, no privilege escalation, the runtime's
// default seccomp profile. Used by the image suites (test/image/*.test.ts), which `npm run image:test`
// starts with SWB_IMAGE set to the image it built.
import { randomBytes } from 'node:crypto';
import { runToExit } from '../helpers/processes.js';

export const IMAGE = process.env.SWB_IMAGE ?? '';

/**
 * Explicit rlimits: podman copies the host's into the container otherwise, and a runtime that may not
 * raise them (no CAP_SYS_RESOURCE where the tests run, e.g. inside another container) refuses to start.
 */
export const ULIMITS = ['--ulimit', 'nofile=8192:8192', '--ulimit', 'nproc=4096:4096'];

/** The pod's securityContext (values.yaml) and its /tmp emptyDir, as podman flags. */
export const HARDENED = [
  '--user', '10001:10001',
  '--read-only',
  '--tmpfs', '/tmp:rw,size=64m,mode=1777',
  '--cap-drop=ALL',
  '--security-opt', 'no-new-privileges',
  ...ULIMITS,
];

export async function podman(args: string[], timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string; out: string }> {
  return runToExit('podman', args, { timeoutMs });
}

/** Like podman(), but an exit code other than 0 is an error naming the command and its output. */
export async function podmanOk(args: string[], timeoutMs?: number): Promise<string> {
  const r = await podman(args, timeoutMs);
  if (r.code !== 0) throw new Error(`podman ${args.join(' ')} exited with ${r.code}: ${r.out}`);
  return r.stdout;
}

export interface Container {
  name: string;
  /** http://127.0.0.1:<host port> for a container port published on loopback. */
  url(containerPort: number): string;
  logs(): Promise<string>;
  exec(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; out: string }>;
  /** `podman stop --time graceSeconds` (the image's STOPSIGNAL, then SIGKILL after the grace): the exit code. */
  stop(graceSeconds: number): Promise<number>;
  remove(): Promise<void>;
}

/** Starts the image detached, hardened, with ports 8080 and 9464 published on loopback at free host ports. */
export async function startContainer(o: { env?: Record<string, string>; mounts?: string[]; args?: string[] } = {}): Promise<Container> {
  const name = `swb-image-test-${process.pid}-${randomBytes(3).toString('hex')}`;
  const env = Object.entries(o.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const mounts = (o.mounts ?? []).flatMap((m) => ['-v', m]);
  await podmanOk(['run', '-d', '--name', name, ...HARDENED, '-p', '127.0.0.1::8080', '-p', '127.0.0.1::9464', ...env, ...mounts, IMAGE, ...(o.args ?? [])]);
  const ports = new Map<number, number>();
  for (const p of [8080, 9464]) {
    const mapped = (await podmanOk(['port', name, `${p}/tcp`])).trim().split('\n')[0]!;
    ports.set(p, Number(mapped.slice(mapped.lastIndexOf(':') + 1)));
  }
  return {
    name,
    url: (p) => `http://127.0.0.1:${ports.get(p)}`,
    logs: async () => (await podman(['logs', name])).out,
    exec: (args) => podman(['exec', name, ...args]),
    stop: async (grace) => {
      await podmanOk(['stop', '--time', String(grace), name], (grace + 30) * 1000);
      return Number((await podmanOk(['inspect', '--format', '{{.State.ExitCode}}', name])).trim());
    },
    remove: async () => {
      await podman(['rm', '--force', '--time', '0', name]);
    },
  };
}

/** Polls url until it answers 200 (the container starting its upstreams), or fails with the container's log. */
export async function waitFor200(c: Container, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url);
      if (r.status === 200) return;
      last = `${r.status} ${await r.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (last: ${last}); container log:\n${await c.logs()}`);
}
