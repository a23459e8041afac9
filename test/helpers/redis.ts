import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { stablePort } from './everything-http.js';

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, commands go unanswered. */
  pause(): void;
  resume(): void;
}

/**
 * A redis-server of the test's own on a free loopback port, which the test may stop and restart.
 * `persist`: an append-only file synced at every write, so what was written survives a restart.
 */
export async function startRedis(o: { persist?: boolean } = {}): Promise<TestRedis> {
  const port = await stablePort(); // restarted on the same port: see stablePort
  const dir = mkdtempSync(join(tmpdir(), 'swb-redis-'));
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...(o.persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']), '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      child!.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child!.once('exit', () => reject(new Error(`redis-server exited: ${out}`)));
    });
    child!.stdout!.resume();
  };
  await launch();
  const r: TestRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((res) => child!.once('exit', res));
      child.kill('SIGKILL');
      await exited;
    },
    async restart() {
      await r.stop();
      await launch();
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
  };
  return r;
}

/** Calls of a Redis command (`xadd`, `evalsha`) the server has answered so far (INFO commandstats). */
export async function commandCalls(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}
