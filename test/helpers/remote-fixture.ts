// test/fixtures/remote-fixture.mjs as a child process: a small Streamable HTTP upstream on a loopback port.
import { spawn, type ChildProcess } from 'node:child_process';

export interface RemoteFixture {
  base: string;
  child: ChildProcess;
  /** Sets the fixture's mode (`extra`: what the mode needs, such as list-error's text). */
  control(mode: string, extra?: Record<string, unknown>): Promise<void>;
  log(): Promise<Array<{ method: string; id?: number; params?: Record<string, unknown> }>>;
}

/** The fixture started with `flags` (see its header: --refusing), once it listens. */
export async function startRemoteFixture(...flags: string[]): Promise<RemoteFixture> {
  const child = spawn(process.execPath, ['test/fixtures/remote-fixture.mjs', '0', ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (b: Buffer) => {
      text += b.toString();
      const m = /listening on (\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(text)));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    child,
    control: async (mode, extra) => {
      await (await fetch(`${base}/control`, { method: 'POST', body: JSON.stringify({ ...extra, mode }) })).text();
    },
    log: async () => (await fetch(`${base}/log`)).json() as Promise<Array<{ method: string; id?: number; params?: Record<string, unknown> }>>,
  };
}
