import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../../src/observability/logger.js';
import { ProcessGroups } from '../../../src/upstream/process-groups.js';
import { alive } from '../../helpers/processes.js';

const logger = createLogger('silent');

describe('stdio children die with the gateway, without import-time side effects', () => {
  it('importing the stdio transport adds no process exit hook', async () => {
    const before = process.listenerCount('exit');
    await import('../../../src/upstream/stdio-transport.js');
    assert.equal(process.listenerCount('exit'), before);
  });

  it('the exit hook is there while a group is alive and gone with the last one', () => {
    const groups = new ProcessGroups();
    const before = process.listenerCount('exit');
    groups.add(111_111);
    groups.add(111_112);
    assert.equal(process.listenerCount('exit'), before + 1);
    groups.delete(111_111);
    assert.equal(process.listenerCount('exit'), before + 1);
    groups.delete(111_112);
    groups.delete(111_112);
    assert.equal(process.listenerCount('exit'), before);
  });

  it('a running child is registered, killed by the hook, and unregistered once it has exited', async () => {
    const { StdioTransport } = await import('../../../src/upstream/stdio-transport.js');
    const groups = new ProcessGroups();
    const hooks = new Set(process.listeners('exit'));
    const t = new StdioTransport({ command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: {}, maxLineBytes: 1024, logger, groups, stopGraceMs: 200 });
    const closed = new Promise<void>((resolve) => (t.onclose = () => resolve()));
    await t.start();
    const hook = process.listeners('exit').find((l) => !hooks.has(l));
    assert.ok(hook, 'an exit hook while the child runs');
    const pid = t.pid!;
    assert.ok(alive(pid));
    (hook as (code: number) => void)(0); // what the gateway's exit would run
    await closed;
    for (let i = 0; i < 40 && alive(pid); i++) await sleep(25);
    assert.equal(alive(pid), false, 'the child is gone');
    assert.equal(process.listeners('exit').includes(hook), false, 'the hook is removed with the last child');
  });
});
