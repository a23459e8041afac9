import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runToExit } from '../helpers/processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = join(ROOT, 'src', 'heap-tuning.ts');

/**
 * V8's flag hash (`v8.cachedDataVersionTag()`, which covers the flags in force) in a fresh Node process
 * with the given command-line flags, after importing the heap-tuning module when asked to.
 */
async function flagHash(o: { nodeFlags?: string[]; importModule: boolean; env?: Record<string, string> }): Promise<string> {
  const code = `${o.importModule ? `await import(${JSON.stringify(MODULE)});` : ''} console.log(String((await import('node:v8')).cachedDataVersionTag()));`;
  const env = { ...process.env, SWITCHBOARD_V8_PRETENURING: '', ...o.env };
  const r = await runToExit(process.execPath, [...(o.nodeFlags ?? []), '--import', import.meta.resolve('tsx'), '--input-type=module', '-e', code], { env, timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.out);
  return r.stdout.trim();
}

describe('heap tuning: the gateway process runs without V8 allocation-site pretenuring', () => {
  it('importing the module gives the flags of `node --no-allocation-site-pretenuring`; SWITCHBOARD_V8_PRETENURING=on leaves them as they were', async () => {
    const [tuned, commandLine, plain, optedOut] = await Promise.all([
      flagHash({ importModule: true }),
      flagHash({ nodeFlags: ['--no-allocation-site-pretenuring'], importModule: false }),
      flagHash({ importModule: false }),
      flagHash({ importModule: true, env: { SWITCHBOARD_V8_PRETENURING: 'on' } }),
    ]);
    assert.notEqual(plain, commandLine, 'the flag moves the hash (else this test could not tell)');
    assert.equal(tuned, commandLine);
    assert.equal(optedOut, plain);
  });

  it('main.ts imports it before any other module, so the flag is in place before they are evaluated', () => {
    const firstImport = /^import\s+(?:[^'"]*from\s+)?['"]([^'"]+)['"]/m.exec(readFileSync(join(ROOT, 'src', 'main.ts'), 'utf8'));
    assert.equal(firstImport?.[1], './heap-tuning.js');
  });
});
