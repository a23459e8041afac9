// A declared path inside a writable one is in the server's hands: it can replace the folder with a link,
// and bubblewrap, binding that path at the next start, follows the link on the host (the source) and in
// the sandbox (the destination) alike. A relative link up to / and down to etc shows the host's whole /etc
// over the sandbox's dozen files. Real files, real bubblewrap.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import type { StdioUpstreamConfig } from '../../../src/config/schema.js';
import { GatewayError } from '../../../src/errors.js';
import { currentHost, planLaunch, type LaunchPlan } from '../../../src/sandbox/launch-plan.js';

const ROOT_USER = process.getuid?.() === 0;
const POOLED = ROOT_USER ? { uid: 1_900_000_011, gid: 65534 } : undefined;
const HAS_BWRAP = currentHost().systemTool('bwrap') !== undefined;

const root = mkdtempSync(join(tmpdir(), 'swb-nested-'));
chmodSync(root, 0o755);
after(() => rmSync(root, { recursive: true, force: true }));
const work = join(root, 'work'); // writable: the server's workspace
mkdirSync(work);
if (ROOT_USER) chownSync(work, 0, 65534);
chmodSync(work, 0o775);
// What the server left at its last run where its config declares a folder: a link up to / and into etc.
const tools = join(work, 'tools');
symlinkSync(relative(work, '/etc'), tools);
const lib = join(work, 'lib'); // a folder as the operator made it
mkdirSync(lib);

/** Only on the host: the sandbox's /etc has a dozen files, never shadow. */
const PROBE = 'if [ -e /etc/shadow ]; then echo escaped; else echo confined; fi';

function upstream(sandbox: Record<string, unknown>): StdioUpstreamConfig {
  const doc = { upstreams: [{ name: 'srv', transport: 'stdio', command: '/bin/sh', args: ['-c', PROBE], sandbox }], endpoints: [{ path: '/mcp', upstreams: ['srv'] }] };
  return parseConfig(doc, 'test', {}, root).upstreams[0] as StdioUpstreamConfig;
}

function run(plan: LaunchPlan): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(plan.file, plan.args, { env: plan.env, cwd: plan.cwd, uid: plan.uid, gid: plan.gid, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('error', reject);
    child.once('close', () => resolve(out.trim()));
  });
}

describe('a declared path inside a writable path', () => {
  it('is refused: the server could make it a link to any host folder', { skip: !HAS_BWRAP && 'needs bubblewrap' }, async () => {
    assert.equal(await run(planLaunch(upstream({ writable: [work] }), undefined, POOLED)), 'confined', 'control: the sandbox has no shadow');
    for (const sandbox of [{ readOnly: [tools], writable: [work] }, { writable: [work, tools] }]) {
      let plan: LaunchPlan | undefined;
      try {
        plan = planLaunch(upstream(sandbox), undefined, POOLED);
      } catch (err) {
        assert.ok(err instanceof GatewayError && err.code === 'SWB_SANDBOX_UNAVAILABLE', String(err));
        assert.match(err.message, new RegExp(`sandbox path ${tools} lies inside the writable path ${work}`));
        continue;
      }
      assert.equal(await run(plan), 'confined', `${JSON.stringify(sandbox)}: the host's /etc was bound into the sandbox`);
    }
  });

  it('is allowed where writable paths are private tmpfs (writableSizeMb): the host folder is out of reach', () => {
    const plan = planLaunch(upstream({ readOnly: [lib], writable: [work], writableSizeMb: 1 }), undefined, POOLED);
    assert.equal(plan.profile, 'bubblewrap');
  });
});
