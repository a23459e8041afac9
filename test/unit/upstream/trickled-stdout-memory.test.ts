// A stdio server that writes a line a byte or two per write. The gateway kept each piece its stdout pipe gave
// it (one a write) as a Buffer of its own until the line's newline: some 250 bytes of Buffer and backing store
// per byte, so a line within maxLineBytes (16 MiB) was held as a few GB. A real child process writing to a real
// pipe, read as StdioTransport reads it; the memory held is measured after a full collection while the newline
// is still held back.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LineSplitter } from '../../../src/jsonrpc/line-splitter.js';
import { until } from '../../helpers/wait.js';

const BYTES = 100_000;

// Writes BYTES - 1 bytes of a line a byte per write, the next once the last has gone; its end once told on stdin.
const CHILD = `
const line = '{"jsonrpc":"2.0","method":"x","params":{"s":"' + 'a'.repeat(${BYTES} - 49) + '"}}\\n';
let i = 0;
const step = () => {
  if (i === line.length - 1) return process.stdin.once('data', () => process.stdout.write(line[i], () => process.exit(0)));
  process.stdout.write(line[i++], () => setImmediate(step));
};
step();
`;

describe("a stdio server's line trickled a byte per write is held as its bytes, not as one Buffer per chunk", () => {
  it('holds under 10 bytes a byte before its newline', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const lines: string[] = [];
    const splitter = new LineSplitter(16 << 20, (l) => lines.push(l), () => {});
    const child = spawn(process.execPath, ['-e', CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      let received = 0;
      let chunks = 0;
      gc();
      const before = held();
      child.stdout.on('data', (c: Buffer) => (splitter.push(c), (received += c.length), chunks++));
      await until('all but the newline to arrive', () => received === BYTES - 1, 60_000);
      gc();
      const grown = held() - before;
      child.stdin.write('go');
      await until('the line', () => lines.length === 1);
      assert.equal(lines[0]!.length, BYTES - 1);
      // How many chunks the pipe gave depends on the machine (a loaded one reads less often: 9,680 in one CI
      // run, where 10,000 were asked for): the bound holds for any number; the case below gives 100,000.
      assert.ok(grown < 10 * BYTES, `${grown} bytes held for a line of ${BYTES} bytes in ${chunks} chunks`);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('a line given a byte per chunk, each chunk a Buffer with its own memory as a pipe read gives it', () => {
  it('holds under 10 bytes a byte before its newline, for 100,000 chunks', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const lines: string[] = [];
    const splitter = new LineSplitter(16 << 20, (l) => lines.push(l), () => {});
    const line = `{"jsonrpc":"2.0","method":"x","params":{"s":"${'a'.repeat(BYTES - 49)}"}}\n`;
    gc();
    const before = held();
    for (let i = 0; i < line.length - 1; i++) {
      // allocUnsafeSlow: a backing store of its own, not a slice of Buffer's shared pool (as a pipe's read is).
      const chunk = Buffer.allocUnsafeSlow(1);
      chunk[0] = line.charCodeAt(i);
      splitter.push(chunk);
    }
    gc();
    const grown = held() - before;
    splitter.push(Buffer.from('\n'));
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.length, BYTES - 1);
    assert.ok(grown < 10 * BYTES, `${grown} bytes held for a line of ${BYTES} bytes in ${BYTES - 1} chunks`);
  });
});

function held(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
