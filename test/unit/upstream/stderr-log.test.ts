import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import { StderrLog } from '../../../src/upstream/stderr-log.js';
import { StdioTransport } from '../../../src/upstream/stdio-transport.js';

function capture() {
  const entries: Array<{ level: number; msg: string; lines?: number; dropped?: number }> = [];
  const logger = createLogger('info', { write: (line: string) => void entries.push(JSON.parse(line)) });
  return { entries, logger };
}

describe('StderrLog', () => {
  it('a stack trace that arrives together is one log entry, its lines kept in order', () => {
    const { entries, logger } = capture();
    // A window no test waits out: close() (the process ended) logs what is pending.
    const log = new StderrLog(logger, { windowMs: 60_000 });
    const trace = ['TypeError: boom', '    at inner (/srv/x.js:1:7)', '    at outer (/srv/x.js:2:3)', '', 'Node.js v20'].filter(Boolean);
    for (const l of trace) log.line(l);
    assert.equal(entries.length, 0, 'held until the group is complete');
    log.close();
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.msg, trace.join('\n'));
    assert.equal(entries[0]!.lines, trace.length);
    assert.equal(entries[0]!.level, 30);
  });

  it('a single line stays a plain entry', () => {
    const { entries, logger } = capture();
    const log = new StderrLog(logger, { windowMs: 60_000 });
    log.line('listening on stdio');
    log.close();
    assert.deepEqual(entries.map((e) => [e.msg, e.lines]), [['listening on stdio', undefined]]);
  });

  it('a flood is cut into bounded entries and limited by the rate; the dropped lines are counted', () => {
    const { entries, logger } = capture();
    // A clock that stands still: no token refills while the flood arrives.
    const log = new StderrLog(logger, { windowMs: 60_000, now: () => 0 });
    for (let i = 0; i < 700; i++) log.line(`line ${i}`);
    log.close();
    const info = entries.filter((e) => e.level === 30);
    // 200 lines at most per entry; 500 lines of burst, the rest dropped and reported once.
    assert.deepEqual(info.map((e) => e.lines), [200, 200, 100]);
    assert.equal(info.at(-1)!.msg.split('\n').at(-1), 'line 499');
    const warn = entries.filter((e) => e.level === 40);
    assert.equal(warn.length, 1);
    assert.equal(warn[0]!.dropped, 200);
  });
});

describe('stderr lines over 64 KiB (found by a review)', () => {
  it('are left out and said so within the same rate as other lines: a flood of them is not a warning each', async () => {
    const { entries, logger } = capture();
    const LINES = 700;
    // Each line just over the limit, written as fast as the pipe takes it; then the server exits.
    const server = `const l = 'x'.repeat(64 * 1024 + 1) + '\\n'; for (let i = 0; i < ${LINES}; i++) process.stderr.write(l);`;
    const t = new StdioTransport({ command: process.execPath, args: ['-e', server], env: {}, maxLineBytes: 1 << 20, logger, stopGraceMs: 2000 });
    const exited = new Promise<void>((resolve) => (t.onclose = () => resolve()));
    await t.start();
    await exited;
    const said = entries.filter((e) => /over 64 KiB|oversized stderr line/.test(e.msg)).length;
    assert.ok(said > 0, 'the operator hears of them');
    assert.ok(entries.length < 50, `${entries.length} log entries for ${LINES} oversized stderr lines`);
  });
});

describe('a stderr line without its newline when the server exits (found by a review)', () => {
  it('is logged: it is often why the server exited', async () => {
    const { entries, logger } = capture();
    // Two lines, the last without a newline (printf, a Go log.Print to a closed pipe, process.stderr.write).
    const server = `process.stderr.write('loading config\\nfatal: config file /srv/x.yaml missing'); process.exit(3);`;
    const t = new StdioTransport({ command: process.execPath, args: ['-e', server], env: {}, maxLineBytes: 1 << 20, logger, stopGraceMs: 2000 });
    const exited = new Promise<void>((resolve) => (t.onclose = () => resolve()));
    await t.start();
    await exited;
    const stderr = entries.filter((e) => e.level === 30).map((e) => e.msg).join('\n');
    assert.match(stderr, /loading config/);
    assert.match(stderr, /fatal: config file \/srv\/x\.yaml missing/, 'the last line, without its newline, was never logged');
  });
});

describe("a stdio server's stderr naming the user's token it was started with (found by a review)", () => {
  it('is logged with the token blanked: a server that prints its token (debug output, a library echoing its Authorization) put it in the gateway log', async () => {
    const { entries, logger } = capture();
    const token = `user-token-${'x'.repeat(24)}`;
    const server = `process.stderr.write('GET /repos with Authorization: Bearer ' + process.env.NOTES_TOKEN + '\\n'); process.exit(1);`;
    const secretEnv = async () => ({ NOTES_TOKEN: token });
    const t = new StdioTransport({ command: process.execPath, args: ['-e', server], env: {}, secretEnv, maxLineBytes: 1 << 20, logger, stopGraceMs: 2000 });
    const exited = new Promise<void>((resolve) => (t.onclose = () => resolve()));
    await t.start();
    await exited;
    const stderr = entries.filter((e) => e.level === 30).map((e) => e.msg).join('\n');
    assert.match(stderr, /Authorization: Bearer \[redacted\]/, 'the line is still logged');
    assert.ok(!JSON.stringify(entries).includes(token), 'the token reached the log');
  });
});

describe("a stdio server's stdout line that is not JSON-RPC, naming the user's token (found by a review)", () => {
  it("is quoted in the warning with the token blanked, even past the excerpt's cut", async () => {
    const { entries, logger } = capture();
    const token = `user-token-${'y'.repeat(400)}`;
    const server = `process.stdout.write('debug: token=' + process.env.NOTES_TOKEN + '\\n'); process.exit(1);`;
    const secretEnv = async () => ({ NOTES_TOKEN: token });
    const t = new StdioTransport({ command: process.execPath, args: ['-e', server], env: {}, secretEnv, maxLineBytes: 1 << 20, logger, stopGraceMs: 2000 });
    const exited = new Promise<void>((resolve) => (t.onclose = () => resolve()));
    await t.start();
    await exited;
    const warned = entries.find((e) => e.level === 40 && /not a JSON-RPC message/.test(e.msg)) as { line?: string } | undefined;
    assert.equal(warned?.line, 'debug: token=[redacted]');
    assert.ok(!JSON.stringify(entries).includes('user-token-yyyy'), 'the token (or its first 200 characters) reached the log');
  });
});
