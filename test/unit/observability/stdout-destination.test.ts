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
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'], timeout: 20_000, killSignal: 'SIGKILL' });
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

/** Runs `body` in a child with the logger as `log` (and closeLogs); resolves with its exit code. */
function childExit(body: string, onStdout: (child: ReturnType<typeof spawn>) => void): Promise<number | null> {
  const script = `
    const { createLogger, closeLogs } = await import(${JSON.stringify(LOGGER)});
    const log = createLogger('info');
    ${body}`;
  // Killed after 20 s: a child that hangs fails the test instead of holding the runner.
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'], timeout: 20_000, killSignal: 'SIGKILL' });
  onStdout(child);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

/**
 * Runs `script` (which waits for its stdin to close) and resolves once its stdout holds `marker`, while
 * it still runs (rejects if it exits first); `exited` then closes its stdin and resolves with its exit code.
 */
async function whileRunning(script: string, marker: string): Promise<{ out: string; exited: () => Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'], timeout: 20_000, killSignal: 'SIGKILL' });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (out.includes(marker)) resolve();
    });
    void exit.then((code) => reject(new Error(`child exited (${code}) before ${JSON.stringify(marker)} arrived`)));
  });
  return {
    // Read when asked: what came after the marker too.
    get out() {
      return out;
    },
    exited: () => {
      child.stdin.end();
      return exit;
    },
  };
}

const LOTS = `for (let i = 0; i < 20000; i++) { log.info({ i, pad: 'x'.repeat(300) }, 'line'); if (i % 500 === 499) await new Promise((r) => setImmediate(r)); }`;

describe('the default log destination (stdout)', () => {
  // Neither case may wait for closeLogs' timeout (60 s, longer than the test's own): a hang fails the test.
  it('a stdout whose reader has gone (EPIPE) ends logging: close returns at once and the process exits', { timeout: 30_000 }, async () => {
    const code = await childExit(`${LOTS}\n await closeLogs(log, 60000); process.exit(0);`, (child) => child.stdout!.once('data', () => child.stdout!.destroy()));
    assert.equal(code, 0);
  });

  it('a reader that stopped reading does not hold the exit: close gives up after its timeout, the exit does not block', { timeout: 30_000 }, async () => {
    // The pipe is never read: it fills, and the write in flight never completes.
    const code = await childExit(`${LOTS}\n await closeLogs(log, 300); process.exit(0);`, () => {});
    assert.equal(code, 0);
  });

  it('writes every line whole and in order, and lets all out before the exit', async () => {
    assertAll(await logInChild(5000, 500, false), 5000);
  });

  it('loses nothing behind a reader that reads slowly', async () => {
    assertAll(await logInChild(3000, 64, true), 3000);
  });

  it('a line held below the batch size still goes out while the process runs on (the hold is brief)', { timeout: 30_000 }, async () => {
    // The child logs one short line a while after its logger was made, and then waits for its stdin to
    // close: the line must arrive before that.
    const script = `
      const { createLogger } = await import(${JSON.stringify(LOGGER)});
      const log = createLogger('info');
      await new Promise((r) => setTimeout(r, 200));
      log.info('lone line');
      process.stdin.resume();
      process.stdin.on('end', () => process.exit(0));`;
    const run = await whileRunning(script, '\n');
    const exited = run.exited;
    assert.equal((JSON.parse(run.out.trim()) as { msg: string }).msg, 'lone line');
    assert.equal(await exited(), 0);
  });

  it('a line held while a write is in flight goes out after that write, with no line after it', { timeout: 30_000 }, async () => {
    // The child's writes to stdout take 300 ms to complete (fs.write's callback delayed: a slow reader),
    // so the hold's timer fires while one is in flight; the last line must still arrive, not wait for
    // a next line that never comes.
    const script = `
      const fs = (await import('node:fs')).default;
      const write = fs.write;
      fs.write = (fd, ...args) => {
        const cb = args.pop();
        return write(fd, ...args, (...r) => (fd === 1 ? setTimeout(() => cb(...r), 300) : cb(...r)));
      };
      const { createLogger } = await import(${JSON.stringify(LOGGER)});
      const log = createLogger('info');
      log.info('first');
      await new Promise((r) => setTimeout(r, 60));
      log.info('tail');
      process.stdin.resume();
      process.stdin.on('end', () => process.exit(0));`;
    const run = await whileRunning(script, '"msg":"tail"');
    const exited = run.exited;
    assert.equal(await exited(), 0);
    assert.deepEqual(run.out.split('\n').filter((l) => l.length > 0).map((l) => (JSON.parse(l) as { msg: string }).msg), ['first', 'tail']);
  });

  it('a process that ends by itself writes what is held (no closeLogs)', async () => {
    const script = `
      const { createLogger } = await import(${JSON.stringify(LOGGER)});
      createLogger('info').info('last words');`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'], timeout: 20_000, killSignal: 'SIGKILL' });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    assert.equal(code, 0);
    assert.equal((JSON.parse(out.trim()) as { msg: string }).msg, 'last words');
  });
});
