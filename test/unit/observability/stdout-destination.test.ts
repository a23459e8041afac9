// The default log destination: every line reaches stdout whole and in order, multi-byte text intact,
// with stdout a pipe read at full speed or slowly (writes in flight while more lines arrive, the case the
// byte mode is for), when the process exits the way the gateway does (closeLogs, then exit at once).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';

const LOGGER = new URL('../../../src/observability/logger.ts', import.meta.url).href;

/** Runs a child that logs `lines` lines in bursts of `burst`, closes the log and exits at once; returns its stdout. */
function logInChild(lines: number, burst: number, readSlowly: boolean): Promise<string> {
  const script = `
    const { createLogger, closeLogs } = await import(${JSON.stringify(LOGGER)});
    const log = createLogger('info');
    const text = 'héllo ✓ 日本 ' + 'x'.repeat(200);
    for (let i = 0; i < ${lines}; i++) {
      log.info({ i, text }, 'line');
      if (i % ${burst} === ${burst} - 1) await new Promise((r) => setImmediate(r));
    }
    await closeLogs(log, 10000);
    log.info('after close: dropped, and no error');
    process.exit(0);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => {
    chunks.push(c);
    if (readSlowly) {
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), 2);
    }
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`child exited ${code}`))));
  });
}

function assertAll(out: string, lines: number): void {
  const got = out.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as { i: number; text: string; msg: string });
  assert.equal(got.length, lines);
  got.forEach((l, i) => {
    assert.equal(l.i, i);
    assert.equal(l.msg, 'line');
    assert.equal(l.text, `héllo ✓ 日本 ${'x'.repeat(200)}`);
  });
}

describe('the default log destination (stdout)', () => {
  it('writes every line whole and in order, and lets all out before the exit', async () => {
    assertAll(await logInChild(5000, 500, false), 5000);
  });

  it('loses nothing behind a reader that reads slowly', async () => {
    assertAll(await logInChild(3000, 64, true), 3000);
  });
});
