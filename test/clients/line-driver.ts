import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * A client driven in a process of its own (to run it on the Node it requires): one JSON line per
 * operation on stdin, one JSON line per answer on stdout; the first line says it is connected.
 */
export class LineDriver {
  #child: ChildProcessWithoutNullStreams;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #nextId = 1;
  #stderr = '';
  #ready: Promise<Record<string, unknown>>;

  constructor(node: string, script: string, args: string[], cwd: string) {
    this.#child = spawn(node, [script, ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child.stderr.on('data', (b: Buffer) => {
      this.#stderr = (this.#stderr + b.toString()).slice(-20_000);
    });
    let ready!: (m: Record<string, unknown>) => void;
    this.#ready = new Promise((resolve, reject) => {
      ready = resolve;
      this.#child.once('exit', (code) => {
        const err = new Error(`${script} exited ${code}: ${this.#stderr}`);
        reject(err);
        for (const p of this.#pending.values()) p.reject(err);
      });
    });
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      const m = JSON.parse(line) as { id?: number; ready?: boolean; result?: unknown; error?: string };
      if (m.ready) return ready(m);
      const p = this.#pending.get(m.id!);
      this.#pending.delete(m.id!);
      if (m.error !== undefined) p?.reject(new Error(m.error));
      else p?.resolve(m.result);
    });
  }

  /** The driver's first line, once it is connected. */
  ready(): Promise<Record<string, unknown>> {
    return this.#ready;
  }

  call<T>(op: string, params: unknown = {}): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#child.stdin.write(`${JSON.stringify({ id, op, params })}\n`);
    });
  }

  /** Ends stdin (the driver closes its client) and waits for the process to exit. */
  async close(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = new Promise((r) => this.#child.once('exit', r));
    this.#child.stdin.end();
    await exited;
  }
}
