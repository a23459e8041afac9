import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'modern-server.mjs');

/** Starts test/fixtures/modern-server.mjs (SDK v2, modern only) on a free port; resolves with its URL once it listens. */
export function startModernServer(env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: URL }> {
  const child = spawn(process.execPath, [FIXTURE, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ child, url: new URL(m[1]!) });
    });
    child.once('exit', (code) => reject(new Error(`modern fixture exited (${code}): ${out}`)));
  });
}
