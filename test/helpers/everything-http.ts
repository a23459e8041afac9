import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * A free loopback port below the kernel's ephemeral range (32768 and up on Linux), for a server a test
 * kills and starts again on the same port: in the ephemeral range, another test's outgoing connection
 * (or a listen on port 0) could take the port while the server is down, and the restart would fail.
 */
export async function stablePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
  return freePort();
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export interface RemoteEverything {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
  /** Kills and starts it again on the same port (its sessions are gone). */
  restart(): Promise<void>;
}

/** server-everything in its Streamable HTTP (`/mcp`) or SSE (`/sse`) mode on a free loopback port. */
export async function startRemoteEverything(mode: 'streamableHttp' | 'sse', port?: number): Promise<RemoteEverything> {
  const p = port ?? (await stablePort()); // restarted on the same port: see stablePort
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(process.execPath, ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', mode], {
      env: { PATH: process.env.PATH!, PORT: String(p) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`server-everything ${mode} did not start: ${text}`)), 15_000);
      child.stderr!.on('data', (b: Buffer) => {
        text += b.toString();
        if (/listening|running/i.test(text)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', () => reject(new Error(`server-everything ${mode} exited: ${text}`)));
    });
    child.stderr!.resume();
    return child;
  };
  const r: RemoteEverything = {
    url: `http://127.0.0.1:${p}/${mode === 'sse' ? 'sse' : 'mcp'}`,
    port: p,
    child: await launch(),
    async stop() {
      if (r.child.exitCode !== null || r.child.signalCode !== null) return;
      const exited = new Promise((res) => r.child.once('exit', res));
      r.child.kill('SIGKILL');
      await exited;
    },
    async restart() {
      await r.stop();
      r.child = await launch();
    },
  };
  return r;
}
