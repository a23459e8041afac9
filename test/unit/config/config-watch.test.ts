// The config file watch on a real directory: removed and made again (a ConfigMap remount, an rm -r and
// a restore), the watch ended silently, and every later edit was never applied.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { watchConfigFile } from '../../../src/config/config-watch.js';
import { until } from '../../helpers/wait.js';

describe('the config file watch', () => {
  const roots: string[] = [];
  after(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });
  const layout = () => {
    const root = mkdtempSync(join(tmpdir(), 'swb-watch-'));
    roots.push(root);
    const dir = join(root, 'config');
    mkdirSync(dir);
    const file = join(dir, 'switchboard.yaml');
    writeFileSync(file, 'one');
    return { dir, file };
  };

  it('follows a config path that is a symlink to a file elsewhere (a checkout of a config repository): edits there reload it', async () => {
    const { dir } = layout();
    const repo = mkdtempSync(join(tmpdir(), 'swb-watch-repo-'));
    roots.push(repo);
    const target = join(repo, 'gateway.yaml');
    writeFileSync(target, 'one');
    const file = join(dir, 'gateway.yaml');
    symlinkSync(target, file);
    let changes = 0;
    const stop = watchConfigFile(file, () => changes++);
    try {
      await new Promise((r) => setTimeout(r, 400)); // the first comparison (nothing changed)
      writeFileSync(target, 'two');
      await until('an edit of the link target was applied', () => changes === 1);
      // As git and editors write it: a new file renamed over the old one.
      writeFileSync(`${target}.tmp`, 'three');
      renameSync(`${target}.tmp`, target);
      await until('a rename over the link target was applied too', () => changes === 2);
    } finally {
      stop();
    }
  });

  it('follows a config path that is a symlink into a ConfigMap mounted elsewhere: its ..data swap there reloads it (found by a review)', async () => {
    // The kubelet's layout in the mount: gateway.yaml -> ..data/gateway.yaml, ..data -> a timestamped
    // directory; an update writes a new one and renames a fresh link over ..data. The config path links to
    // the mount's gateway.yaml (an image's fixed path, the mount elsewhere): the swap happens in the mount.
    const { dir } = layout();
    const mount = mkdtempSync(join(tmpdir(), 'swb-watch-configmap-'));
    roots.push(mount);
    const version = (n: number, text: string) => {
      const d = join(mount, `..2026_12_07_00_00_0${n}.${n}`);
      mkdirSync(d);
      writeFileSync(join(d, 'gateway.yaml'), text);
      return d;
    };
    const first = version(1, 'one');
    symlinkSync(basename(first), join(mount, '..data'));
    symlinkSync(join('..data', 'gateway.yaml'), join(mount, 'gateway.yaml'));
    const file = join(dir, 'gateway.yaml');
    symlinkSync(join(mount, 'gateway.yaml'), file);
    let changes = 0;
    const stop = watchConfigFile(file, () => changes++);
    try {
      await new Promise((r) => setTimeout(r, 400)); // the first comparison (nothing changed)
      const second = version(2, 'two');
      symlinkSync(basename(second), join(mount, '..data_tmp'));
      renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
      rmSync(first, { recursive: true });
      await until('the swap in the mount was applied', () => changes === 1);
      const third = version(3, 'three');
      symlinkSync(basename(third), join(mount, '..data_tmp'));
      renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
      rmSync(second, { recursive: true });
      await until('and the next one', () => changes === 2);
    } finally {
      stop();
    }
  });

  it('comes back when its directory is removed and made again, and applies the file as it then is', async () => {
    const { dir, file } = layout();
    let changes = 0;
    const stop = watchConfigFile(file, () => changes++);
    try {
      await new Promise((r) => setTimeout(r, 400)); // the first comparison (nothing changed)
      rmSync(dir, { recursive: true });
      await new Promise((r) => setTimeout(r, 200)); // the watcher sees its directory go
      mkdirSync(dir);
      writeFileSync(file, 'two');
      await until('the file written in the new directory was applied', () => changes === 1);
      writeFileSync(file, 'three');
      await until('a later edit was applied too', () => changes === 2);
    } finally {
      stop();
    }
  });

  it('says when it is down and when it is back, and keeps trying while the directory is missing', async () => {
    const { dir, file } = layout();
    const states: boolean[] = [];
    const logged: string[] = [];
    const log = { warn: (_o: object, msg: string) => logged.push(`warn ${msg}`), info: (_o: object, msg: string) => logged.push(`info ${msg}`) };
    let changes = 0;
    const stop = watchConfigFile(file, () => changes++, { log, onState: (up) => states.push(up), retryMs: { first: 20, max: 80 } });
    try {
      await until('the watch is up', () => states.length === 1);
      rmSync(dir, { recursive: true });
      await until('the watch is down', () => states.length === 2);
      await new Promise((r) => setTimeout(r, 300)); // several attempts find no directory
      assert.deepEqual(states, [true, false], 'one outage is reported once');
      mkdirSync(dir);
      writeFileSync(file, 'two');
      await until('the watch is back and applied the file', () => states.length === 3 && changes === 1);
      assert.deepEqual(states, [true, false, true]);
      assert.equal(logged.filter((l) => l.startsWith('warn')).length, 1);
      assert.match(logged[0]!, /config file watch stopped/);
      assert.match(logged.at(-1)!, /^info watching the config file again/);
    } finally {
      stop();
    }
  });

  it('a directory missing when the watch starts is watched once it appears', async () => {
    const { dir, file } = layout();
    rmSync(dir, { recursive: true });
    let changes = 0;
    const stop = watchConfigFile(file, () => changes++, { loaded: 'what was loaded', retryMs: { first: 20, max: 80 } });
    try {
      mkdirSync(dir);
      writeFileSync(file, 'two');
      await until('the file was applied', () => changes === 1);
    } finally {
      stop();
    }
  });
});
