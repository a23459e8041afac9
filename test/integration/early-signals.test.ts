// Signals that come while the gateway's modules load (about 1 s from dist/, 3 s under tsx), before serve
// has set up its handlers. A SIGHUP there (a `systemctl reload`, a ConfigMap reloader right after start)
// killed the gateway (exit by signal, 129), and SIGTERM/SIGINT ended it by signal too (143/130) where a
// stop exits 0. The load of the app module is held (test/helpers/module-gate.mjs) so the signal lands in
// that window every time.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startServe, type ServeProcess } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const ROOT = join(import.meta.dirname, '..', '..');
const GATE = join(ROOT, 'test', 'helpers', 'module-gate.mjs');

interface Started extends ServeProcess {
  /** The gate's folder (SWB_GATE_DIR). */
  gate: string;
}

/** serve with a fixture upstream, its app module held at the gate until the test opens it. */
function startHeld(): Started {
  const gate = mkdtempSync(join(tmpdir(), 'swb-early-signal-gate-'));
  const serve = startServe(
    'swb-early-signal-',
    `upstreams:
  - { name: fixture, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${join(ROOT, 'test', 'fixtures', 'conformance-server.mjs')}], sharing: shared }
endpoints: [{ path: /mcp, upstreams: [fixture] }]
`,
    { nodeArgs: ['--import', GATE], env: { SWB_GATE_DIR: gate } },
  );
  return { ...serve, gate };
}

async function atGate(s: Started): Promise<void> {
  assert.ok(await waitFor(() => existsSync(join(s.gate, 'waiting')), { timeoutMs: 30_000 }), `the app module was never loaded: ${s.log()}`);
}

describe('signals while the modules load', { timeout: 120_000 }, () => {
  it('a SIGHUP does not kill the gateway: it starts, then reads its config again', async () => {
    const s = startHeld();
    let gone: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    void s.exited.then((e) => (gone = e));
    try {
      await atGate(s);
      s.child.kill('SIGHUP');
      // The signal is handled (or not) before start-up goes on (module-gate.mjs): what follows sees the outcome.
      writeFileSync(join(s.gate, 'open'), '');
      const reloaded = await waitFor(() => gone !== undefined || /config reload/.test(s.log()), { timeoutMs: 60_000 });
      assert.equal(gone, undefined, `the SIGHUP ended the gateway (${JSON.stringify(gone)}): ${s.log()}`);
      assert.ok(reloaded, `no reload after the early SIGHUP: ${s.log()}`);
      assert.match(s.log(), /switchboard listening/);
      const reload = s.log().split('\n').find((l) => /config reload/.test(l)) ?? '';
      assert.match(reload, /"trigger":"SIGHUP"/);
    } finally {
      s.child.kill('SIGTERM');
    }
    const { code } = await s.exited;
    assert.equal(code, 0, s.log());
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`a ${signal} exits 0, without starting anything`, async () => {
      const s = startHeld();
      try {
        await atGate(s);
        s.child.kill(signal);
      } finally {
        writeFileSync(join(s.gate, 'open'), '');
      }
      const outcome = await s.exited;
      assert.deepEqual(outcome, { code: 0, signal: null }, s.log());
      assert.doesNotMatch(s.log(), /switchboard listening|starting upstream/);
    });
  }
});
