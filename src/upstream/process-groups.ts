import { readFileSync } from 'node:fs';

/**
 * The process groups of running children, killed when the gateway itself exits so that its death
 * leaves no orphans behind. The exit hook is installed while a group is alive and removed when the
 * last one is gone: nothing happens at import time, and an idle gateway holds no hook.
 */
export class ProcessGroups {
  readonly #live = new Set<number>();
  readonly #onExit = (): void => {
    for (const pid of this.#live) killGroup(pid);
  };

  add(pid: number): void {
    if (this.#live.size === 0) process.once('exit', this.#onExit);
    this.#live.add(pid);
  }

  delete(pid: number): void {
    if (this.#live.delete(pid) && this.#live.size === 0) process.off('exit', this.#onExit);
  }
}

/** SIGKILL to a whole process group; one that is already empty is no error. */
export function killGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

/** A process's children (Linux /proc, its main thread's); none where that cannot be read. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
