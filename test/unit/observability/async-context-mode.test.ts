// Which AsyncLocalStorage a process runs on, and what tracing says about it at start: the hook-based one
// (Node 22 without --experimental-async-context-frame) makes every traced call dearer, and an operator
// is told so once, with the flag that fixes it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { asyncContextOnHooks, HOOKED_CONTEXT_NOTE } from '../../../src/observability/async-context-mode.js';
import { createLogger } from '../../../src/observability/logger.js';
import { loadTracing } from '../../../src/observability/load-tracing.js';

const MAJOR = Number(process.versions.node.split('.')[0]);
const FLAG = '--experimental-async-context-frame';
const flagged = process.execArgv.includes(FLAG) || (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(FLAG);
const MODULE = new URL('../../../src/observability/async-context-mode.ts', import.meta.url).href;

/** What a child node started with `args` says of its AsyncLocalStorage. */
function childOnHooks(args: string[]): boolean {
  const script = `const { asyncContextOnHooks } = await import(${JSON.stringify(MODULE)}); process.stdout.write(String(asyncContextOnHooks()));`;
  const env = { ...process.env, NODE_OPTIONS: '' };
  const r = spawnSync(process.execPath, [...args, '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout === 'true';
}

describe('AsyncLocalStorage mode', () => {
  it('is on hooks on Node 20 and 22 without the flag, on frames on Node 24', () => {
    assert.equal(asyncContextOnHooks(), MAJOR < 24 && !flagged);
    assert.equal(childOnHooks([]), MAJOR < 24);
  });

  it('is on frames on Node 22 started with --experimental-async-context-frame', { skip: MAJOR !== 22 && 'only Node 22 takes the flag' }, () => {
    assert.equal(childOnHooks([FLAG]), false);
  });

  it('tracing warns at start exactly when it runs on hooks', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const tracing = await loadTracing({ enabled: true, endpoint: 'http://127.0.0.1:9/', protocol: 'http/protobuf', sampleRatio: 1, headers: {}, recordPrincipal: false }, logger, {});
    await tracing.shutdown();
    const warned = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.msg === HOOKED_CONTEXT_NOTE);
    assert.equal(warned.length, asyncContextOnHooks() ? 1 : 0);
    if (warned.length > 0) assert.equal(warned[0]!.level, 40);
  });
});
