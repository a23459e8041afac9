import { spawn } from 'node:child_process';

/** Whether a process exists (signal 0 probes without touching it). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits for a gateway process's "switchboard listening on <url>" log line and returns the URL. */
export function listeningAddress(child: import('node:child_process').ChildProcess, timeoutMs = 30_000): Promise<string> {
  let out = '';
  return new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`the gateway did not start: ${out}`)), timeoutMs);
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
