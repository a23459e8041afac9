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
