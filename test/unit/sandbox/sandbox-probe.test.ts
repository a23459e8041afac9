import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import type { LaunchPlan } from '../../../src/sandbox/launch-plan.js';
import { SandboxProbe, hintFor } from '../../../src/sandbox/sandbox-probe.js';
import { SandboxRefusal } from '../../../src/sandbox/sandbox-refusal.js';

const dir = mkdtempSync(join(tmpdir(), 'swb-probe-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A plan whose probe writes bubblewrap-like words to stderr and counts its runs in a file. */
function plan(stderr: string, counter: string, env: Record<string, string> = {}): LaunchPlan {
  const script = `require('fs').appendFileSync(${JSON.stringify(counter)}, 'x'); process.stderr.write(${JSON.stringify(stderr)} + ' env=' + JSON.stringify(process.env)); process.exit(1)`;
  return {
    profile: 'bubblewrap',
    file: process.execPath,
    args: [],
    env,
    cwd: undefined,
    uid: undefined,
    gid: undefined,
    pooledUser: true,
    probe: { file: process.execPath, args: ['-e', script] },
    summary: {},
  };
}

const reasonOf = async (p: Promise<void>) => {
  const err = await p.then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof GatewayError && err.code === 'SWB_SANDBOX_UNAVAILABLE');
  return err.message;
};

describe('SandboxProbe', () => {
  it('one probe in flight serves two upstreams with the same sandbox, and its reason names neither', async () => {
    const counter = join(dir, 'shared');
    const probe = new SandboxProbe();
    // Two upstreams, two environments (the first one's secret), one sandbox.
    const first = probe.check(plan("bwrap: Can't find source path /srv/hidden/inner: Permission denied", counter, { TOKEN: 'first-secret' }));
    const second = probe.check(plan("bwrap: Can't find source path /srv/hidden/inner: Permission denied", counter, { TOKEN: 'second' }));
    const [a, b] = await Promise.all([reasonOf(first), reasonOf(second)]);
    assert.equal(readFileSync(counter, 'utf8'), 'x', 'probed once');
    assert.equal(a, b);
    assert.match(a, /^its bubblewrap sandbox cannot be set up here: bwrap: Can't find source path \/srv\/hidden\/inner: Permission denied/);
    assert.doesNotMatch(a, /upstream/, 'no upstream name in a shared result');
    // Nor any one upstream's environment: the probe runs with its own.
    assert.doesNotMatch(a, /first-secret|TOKEN/);
  });

  it('the hint matches the cause: user namespaces only when bubblewrap names them', async () => {
    const perm = await reasonOf(new SandboxProbe().check(plan("bwrap: Can't chdir to /root/project: Permission denied", join(dir, 'perm'))));
    assert.doesNotMatch(perm, /namespace/);
    assert.match(perm, /needs search permission/);
    const userns = await reasonOf(new SandboxProbe().check(plan('bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.', join(dir, 'ns'))));
    assert.match(userns, /bubblewrap needs unprivileged user namespaces; where they are unavailable/);
    assert.equal(hintFor('bubblewrap', 'bwrap: setting up uid map: Permission denied', '1:2').includes('user namespaces'), true);
    assert.equal(hintFor('limits', 'prlimit: failed to set the RLIMIT_NPROC resource limit: Operation not permitted', '1:2'), '');
    assert.equal(hintFor('bubblewrap', 'bwrap: execvp /usr/bin/prlimit: No such file or directory', '1:2'), '');
  });
});

describe('SandboxRefusal', () => {
  it('tells the client its own upstream and an incident id, and keeps the reason off the wire', () => {
    const cause = new GatewayError('SWB_SANDBOX_UNAVAILABLE', "its bubblewrap sandbox cannot be set up here: bwrap: Can't find source path /srv/hidden: Permission denied");
    const a = new SandboxRefusal('files', cause);
    const b = new SandboxRefusal('files', cause);
    assert.match(a.incident, /^[0-9a-f]{12}$/);
    assert.notEqual(a.incident, b.incident);
    assert.equal(a.message, `upstream "files" could not start in its sandbox (incident ${a.incident}); an operator can find the reason in the gateway's log`);
    assert.deepEqual(a.details, { upstream: 'files', incident: a.incident });
    assert.equal(a.reason, cause.message);
    assert.equal(a.code, 'SWB_SANDBOX_UNAVAILABLE');
  });
});
