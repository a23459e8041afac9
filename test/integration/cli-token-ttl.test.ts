import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function token(ttl: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts'), 'token', '--tenant', 'dev', '--sub', 'me', '--ttl', ttl], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
}

describe('switchboard token --ttl', () => {
  it('a --ttl it cannot read is a usage error: one line and the usage, exit 2, no stack trace', () => {
    const r = token('12 hours');
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^switchboard token: bad --ttl "12 hours": use e\.g\. 900, 15m, 12h or 7d\n/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  it('refuses a zero --ttl rather than print a token that is expired when it is issued', () => {
    for (const ttl of ['0', '0s', '0h']) {
      const r = token(ttl);
      assert.equal(r.status, 2, `${ttl}: ${r.stdout}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /bad --ttl/);
    }
  });
});
