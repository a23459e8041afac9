// Child processes in tests: whether one is alive, a gateway's listening line, a command run to its end,
// and `serve` started from a config file of its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether a process exists (signal 0 probes without touching it). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits for a gateway process's "switchboard listening on <url>" log line and returns the URL. One that
 * exits first is reported at once; one still silent at timeoutMs is reported with the machine's load, so
 * that a start starved of CPU can be told from a hang.
 */
export function listeningAddress(child: import('node:child_process').ChildProcess, timeoutMs = 30_000): Promise<string> {
  let out = '';
  return new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => {
      const load = loadavg().map((l) => l.toFixed(1)).join(' ');
      reject(new Error(`the gateway did not start within ${timeoutMs / 1000} s (load average ${load} on ${availableParallelism()} CPUs); its log so far: ${out}`));
    }, timeoutMs);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /switchboard listening on (http:\/\/[^"\s]+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
    child.once('exit', () => reject(new Error(`the gateway exited: ${out}`)));
  });
}

/**
 * Runs a command to its end (killed after timeoutMs), collecting its output: stdout, stderr, and both
 * interleaved as they came (`out`).
 */
export function runToExit(
  command: string,
  args: string[],
  o: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string; out: string }> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let out = '';
    child.stdout!.on('data', (b) => ((stdout += b), (out += b)));
    child.stderr!.on('data', (b) => ((stderr += b), (out += b)));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, out });
    });
  });
}

const ROOT = join(import.meta.dirname, '..', '..');

export interface ServeProcess {
  child: ChildProcess;
  /** Its stdout and stderr so far, interleaved as they came. */
  log: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `serve` from src/ (through tsx, LOG_LEVEL info) in a child process, its config file written in a new
 * folder named from `prefix`: a listener on a free loopback port, no metrics listener, no auth, then
 * `yaml` (upstreams, endpoints and whatever else the test needs). `nodeArgs` go after tsx's import (a
 * loader hook given there sees what tsx made of a module); `env` is added to this process's.
 */
export function startServe(prefix: string, yaml: string, o: { nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {}): ServeProcess {
  const file = join(mkdtempSync(join(tmpdir(), prefix)), 'config.yaml');
  writeFileSync(file, `server: { host: 127.0.0.1, port: 0 }\nmetrics: { enabled: false }\nauth: { mode: none }\n${yaml}`);
  const child = spawn(process.execPath, ['--import', 'tsx', ...(o.nodeArgs ?? []), 'src/main.ts', 'serve', '--config', file], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (b: Buffer) => (log += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  return { child, log: () => log, exited };
}
