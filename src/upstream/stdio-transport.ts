import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { Logger } from '../observability/logger.js';
import { LineSplitter } from '../jsonrpc/line-splitter.js';
import { StderrLog } from './stderr-log.js';
import { readByTurns } from './read-by-turns.js';
import { NoiseLog, noiseFlood } from './noise-log.js';
import { parseText, validateMessage } from '../jsonrpc/parse.js';
import { tooDeep } from './deep-messages.js';
import type { JsonRpcMessage, RequestId } from '../jsonrpc/types.js';
import { TransportError, type MessageExtra, type Transport } from '../transport/transport.js';
import { childrenOf, killGroup, ProcessGroups } from './process-groups.js';
import { childStdio, InheritedDescriptors } from '../sandbox/inherited-descriptors.js';

/** What a server has not read of its stdin that the gateway keeps, in maxLineBytes: room for several of the largest calls (#backlog). */
const STDIN_BACKLOG_LINES = 4;

/** A message the server waits for, which the gateway owes it: an answer to its request, a call's cancellation. */
const owed = (message: JsonRpcMessage): boolean => !('method' in message) || message.method === 'notifications/cancelled';

/** How long the pipes may outlive the server's own exit (see #releasePipes); no longer than stopGraceMs. */
const PIPE_LINGER_MS = 500;

export interface StdioOptions {
  command: string;
  args: readonly string[];
  cwd?: string | undefined;
  /** The child's complete environment: nothing of the gateway's own leaks in. */
  env: Record<string, string>;
  /** Start the child as this user and group (the gateway must be root to differ from its own). */
  uid?: number | undefined;
  gid?: number | undefined;
  /** Runs before each start; a rejection means the child must not start (a sandbox that cannot be set up). */
  preflight?: (() => Promise<void>) | undefined;
  /**
   * Variables fetched just before each start, after the preflight (a user's token, never kept here): so
   * that a restart gets a current one. A rejection means the child must not start (no consent yet).
   */
  secretEnv?: (() => Promise<Record<string, string>>) | undefined;
  /**
   * Runs last, once the child is really to be spawned (the preflight passed, the secrets are there): what
   * only a started process needs (its private home) is made here, not for every start that is refused.
   * A throw means the child does not start.
   */
  prepare?: (() => void) | undefined;
  /** Called once when the process is gone, or when it never started (to give back what was reserved for it). */
  onExit?: (() => void) | undefined;
  maxLineBytes: number;
  /** How long each step of the stop sequence (stdin close, SIGTERM) waits before the next. */
  stopGraceMs?: number;
  /**
   * The program is bubblewrap: SIGTERM kills it, and it the server with SIGKILL (--die-with-parent), whose
   * processes are in a group of their own (--new-session). The stop's SIGTERM goes to its children's groups.
   */
  wrapped?: boolean | undefined;
  logger: Logger;
  onProtocolViolation?: (kind: 'non-json' | 'invalid-message' | 'oversized-line') => void;
  /** Where the child's group is registered to die with the gateway; a transport built alone keeps its own. */
  groups?: ProcessGroups | undefined;
  /** What the gateway holds open that every child would get (see InheritedDescriptors); a transport built alone looks itself. */
  inherited?: InheritedDescriptors | undefined;
}

/**
 * A child process speaking newline-delimited JSON-RPC on stdin/stdout. It runs in its own process
 * group so that stopping it also stops whatever it spawned (npx/uvx launchers leave grandchildren).
 */
export class StdioTransport implements Transport {
  readonly #opts: StdioOptions;
  #child: ChildProcessWithoutNullStreams | undefined;
  #exited: Promise<void> | undefined;
  #closing = false;
  #closed = false;
  /** The stop sequence, once begun (see close). */
  #stopped: Promise<void> | undefined;
  /** One wait for 'drain' shared by every writer, rather than a listener each. */
  #drain: Promise<unknown> | undefined;
  #batch: string[] = [];
  /** The batch's size in characters (as many bytes but for non-ASCII text; close enough for a bound). */
  #batchChars = 0;
  /** Sends are being refused for a stdin the server does not read (warned once per episode). */
  #backlogged = false;
  /** What the gateway owed the server and queued past the limit in this episode (see #backlog). */
  #owedPastLimit = 0;
  #batchDone: Promise<void> | undefined;
  #closeReason: TransportError | undefined;
  readonly #groups: ProcessGroups;
  readonly #inherited: InheritedDescriptors;
  /** Warnings about stdout lines that are not JSON-RPC, at a bounded rate. */
  readonly #noise: NoiseLog;
  onmessage?: (message: JsonRpcMessage, extra?: MessageExtra) => void;
  onclose?: (reason?: TransportError) => void;
  onerror?: (error: Error) => void;
  onanswerlost?: (requestId: RequestId, error: Error) => void;

  constructor(opts: StdioOptions) {
    this.#opts = opts;
    this.#groups = opts.groups ?? new ProcessGroups();
    this.#inherited = opts.inherited ?? new InheritedDescriptors();
    this.#noise = new NoiseLog(opts.logger, undefined, 'line', true);
  }

  /** The child's process id (the leader of its process group), once it runs. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  async start(): Promise<void> {
    if (this.#opts.preflight) await this.#preflight(this.#opts.preflight);
    const secret = this.#opts.secretEnv ? await this.#preflight(this.#opts.secretEnv) : undefined;
    // Closed while it waited (a session ended, a reload retired the upstream): not started at all. A
    // process started now would have no one left to stop it, with the user's token in its environment.
    if (this.#closing) {
      this.#neverStarted();
      throw new Error('the upstream was stopped before its process started');
    }
    // No await from the check above to the spawn: a close() in between would leave the child unstopped.
    try {
      this.#opts.prepare?.();
    } catch (err) {
      this.#neverStarted();
      throw err;
    }
    const child = await this.#spawn(secret);
    const pid = child.pid!;
    this.#groups.add(pid);
    this.#readStdout(child, pid);
    this.#logStderr(child, secret);
    this.#watchExit(child, pid);
  }

  async #preflight<T>(preflight: () => Promise<T>): Promise<T> {
    try {
      return await preflight();
    } catch (err) {
      this.#neverStarted();
      throw err;
    }
  }

  /** Resolves once the child runs; rejects when the program could not be started at all. */
  async #spawn(secret: Record<string, string> | undefined): Promise<ChildProcessWithoutNullStreams> {
    const { command, args, cwd, uid, gid } = this.#opts;
    const env = secret ? { ...this.#opts.env, ...secret } : this.#opts.env;
    // Only its stdio: a descriptor the gateway inherited reaches it as /dev/null, never as what it leads to.
    const inherited = this.#inherited.current();
    let nul: number | undefined;
    let child: ChildProcessWithoutNullStreams;
    try {
      nul = inherited.length > 0 ? openSync('/dev/null', 'r') : undefined;
      child = spawn(command, args, { cwd, env, uid, gid, stdio: childStdio(inherited, nul), detached: true, windowsHide: true }) as ChildProcessWithoutNullStreams;
    } catch (err) {
      // No process (out of descriptors): what was reserved for it goes back, as when its program cannot start.
      this.#neverStarted();
      throw new Error(`cannot start "${command}": ${(err as Error).message}`);
    } finally {
      if (nul !== undefined) closeSync(nul); // the child has its copies once spawn returns
    }
    this.#child = child;
    // 'close' (not 'exit'): it also fires when the program could not be started at all, and only
    // after stdout is drained, so an answer written just before exiting is still read. Pipes a helper
    // keeps open past the server's exit are let go after a short wait (#releasePipes).
    this.#exited = new Promise((resolve) => child.once('close', () => resolve()));

    try {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } catch (err) {
      this.#neverStarted();
      throw new Error(`cannot start "${command}": ${(err as Error).message}`);
    }
    return child;
  }

  #neverStarted(): void {
    this.#closed = true;
    this.#opts.onExit?.();
  }

  #readStdout(child: ChildProcessWithoutNullStreams, pid: number): void {
    const splitter = new LineSplitter(
      this.#opts.maxLineBytes,
      (line, bytes) => this.#onLine(line, bytes),
      () => {},
      (bytes) => this.#onFlood(pid, bytes),
    );
    readByTurns(child.stdout, (chunk) => splitter.push(chunk));
    child.stdout.once('end', () => this.#cutIfRunning(child, pid, 'output-closed', 'stdout'));
  }

  /**
   * Its stdout ended, or writing to its stdin failed (EPIPE). A server that exits does both, a moment before
   * its exit is seen: it gets the pipes' linger to be seen gone. One still running then closed that pipe and
   * runs on: it can answer nothing, or is sent nothing (each call waited out requestTimeoutMs, and the health
   * checks found it a minute or more later), so it is stopped as a crash, and its instance restarts it. In a
   * bubblewrap sandbox the sandbox's own processes hold the pipes: there it is the health checks that find it.
   */
  #cutIfRunning(child: ChildProcessWithoutNullStreams, pid: number, code: 'output-closed' | 'input-closed', pipe: 'stdout' | 'stdin'): void {
    const wait = Math.min(PIPE_LINGER_MS, this.#opts.stopGraceMs ?? PIPE_LINGER_MS);
    setTimeout(() => {
      if (this.#closeReason || this.#closing || this.#closed || child.exitCode !== null || child.signalCode !== null) return;
      this.#closeReason = new TransportError(code, `upstream process closed its ${pipe} but kept running; it was stopped and will be restarted`);
      this.#opts.logger.error({ pid }, `upstream closed its ${pipe} but kept running; killing it`);
      this.#signal('SIGKILL');
    }, wait).unref();
  }

  /**
   * A message past the limit is a flood (or a server gone wrong): stop it at once rather than read on,
   * and let the instance restart it. Its requests in flight fail with this reason.
   */
  #onFlood(pid: number, bytes: number): void {
    if (this.#closeReason) return;
    this.#opts.logger.error({ bytesSoFar: bytes, limit: this.#opts.maxLineBytes, pid }, 'upstream flooded its stdout past maxLineBytes; killing it');
    this.#opts.onProtocolViolation?.('oversized-line');
    this.#signal('SIGKILL', new TransportError('message-too-large', `upstream process wrote a message of more than ${this.#opts.maxLineBytes} bytes (maxLineBytes); it was stopped and will be restarted`));
  }

  #logStderr(child: ChildProcessWithoutNullStreams, secret: Record<string, string> | undefined): void {
    const secrets = secret && Object.values(secret);
    this.#noise.blanking(secrets ?? []); // what it was started with (a user's token), never logged: nor in the stdout lines quoted
    const stderrLog = new StderrLog(this.#opts.logger, { secrets });
    // A line over the limit is left out and said so as a line of its own, within the same rate (never a warning each).
    const stderr = new LineSplitter(
      64 * 1024,
      (line) => stderrLog.line(line),
      (bytes) => stderrLog.line(`(a stderr line of ${bytes} bytes, over 64 KiB, was left out)`),
    );
    // What it wrote last without a newline is often why it exited (printf "fatal: …" >&2; exit 1).
    child.once('close', () => (stderr.end(), stderrLog.close()));
    readByTurns(child.stderr, (chunk) => stderr.push(chunk));
  }

  #watchExit(child: ChildProcessWithoutNullStreams, pid: number): void {
    const { logger } = this.#opts;
    // EPIPE when the child dies with writes pending is expected; the exit handler reports the death.
    child.stdin.on('error', (err) => (logger.debug({ err }, 'upstream stdin error'), this.#cutIfRunning(child, pid, 'input-closed', 'stdin')));
    child.on('error', (err) => this.onerror?.(err));
    child.once('exit', () => {
      this.#groups.delete(pid);
      // The leader may be gone while grandchildren linger in its group (and hold our pipes open).
      killGroup(pid);
      this.#releasePipes(child);
    });
    child.once('close', (code, signal) => {
      this.#noise.close();
      this.#opts.onExit?.();
      if (!this.#closing) logger.warn({ code, signal, pid }, 'upstream process exited');
      this.#closed = true;
      this.onclose?.(this.#closeReason);
    });
  }

  /**
   * 'close' waits for every holder of the child's stdout and stderr. A helper the server started in a
   * session of its own (setsid, Python's start_new_session, Node's detached spawn) with its stdio
   * inherited is out of reach of the group kill and may hold them for ever: the server would never be
   * seen gone (never restarted, its sandbox uid never given back, close() never returning). After a short
   * wait, still long enough to read what the server wrote just before exiting, the pipes are let go; their
   * closing is what lets 'close' fire, exit code and all.
   */
  #releasePipes(child: ChildProcessWithoutNullStreams): void {
    const wait = Math.min(PIPE_LINGER_MS, this.#opts.stopGraceMs ?? PIPE_LINGER_MS);
    const timer = setTimeout(() => {
      child.stdin.destroy();
      child.stdout.destroy();
      child.stderr.destroy();
    }, wait);
    child.once('close', () => clearTimeout(timer));
  }

  #onLine(line: string, bytes: number): void {
    if (this.#closeReason) return; // cut (a flood): the rest of the chunk being split is not looked at
    let message: JsonRpcMessage;
    try {
      message = validateMessage(parseText(line));
    } catch (err) {
      const kind = line.trimStart().startsWith('{') ? 'invalid-message' : 'non-json';
      const flooded = this.#noise.line(kind, line);
      this.#opts.onProtocolViolation?.(kind);
      if (flooded) this.#signal('SIGKILL', noiseFlood(this.#opts.logger, this.#child?.pid));
      return;
    }
    const deep = tooDeep(line, message); // the call it answers fails; nothing of it is relayed
    if (deep) return void (this.#noise.line('invalid-message', line, deep.error.message), this.#opts.onProtocolViolation?.('invalid-message'), deep.id !== undefined && this.onanswerlost?.(deep.id, deep.error));
    this.onmessage?.(message, { bytes });
  }

  /**
   * Messages sent during one turn of the event loop leave in a single pipe write (a write syscall per
   * message was the largest single cost under load). The caller's promise settles once its batch is
   * written, and waits for 'drain' when the pipe is full: backpressure reaches every sender.
   */
  send(message: JsonRpcMessage): Promise<void> {
    const child = this.#child;
    if (!child || this.#closed || this.#closing) return Promise.reject(new Error('upstream process is not running'));
    const line = `${JSON.stringify(message)}\n`;
    const backlog = this.#backlog(child, owed(message) ? line.length : 0);
    if (backlog) return Promise.reject(backlog);
    this.#batch.push(line);
    this.#batchChars += line.length;
    if (!this.#batchDone) {
      this.#batchDone = new Promise<void>((resolve) => setImmediate(() => resolve(this.#flush())));
    }
    return this.#batchDone;
  }

  /**
   * What the server has not read yet stays in the gateway's memory: a server that never reads its stdin
   * (stuck, or not reading on purpose) would have every message sent to it kept, without bound. Past
   * 4 × maxLineBytes of them, new requests are refused (the call fails with SWB_UPSTREAM_BUSY, which its
   * circuit does not count) rather than the server killed as a stdout flood is: one busy with a long call
   * still answers the calls it has read. What the gateway owes it (`owedChars`: an answer to its own
   * request, a call's cancellation) still goes, up to as much again: dropped, the server would wait for it
   * for ever; capped, one asking without reading (pings in a loop) cannot grow it without bound either.
   */
  #backlog(child: ChildProcessWithoutNullStreams, owedChars: number): TransportError | undefined {
    const queued = child.stdin.writableLength + this.#batchChars;
    const limit = STDIN_BACKLOG_LINES * this.#opts.maxLineBytes;
    if (queued <= limit) {
      this.#backlogged = false;
      this.#owedPastLimit = 0;
      return undefined;
    }
    if (owedChars > 0 && this.#owedPastLimit + owedChars <= limit) {
      this.#owedPastLimit += owedChars;
      return undefined;
    }
    if (!this.#backlogged) this.#opts.logger.warn({ queued, limit, pid: child.pid }, 'upstream is not reading its stdin; refusing messages past 4 × maxLineBytes');
    this.#backlogged = true;
    return new TransportError('backlogged', `its process has not read ${queued} bytes of what the gateway sent it, more than ${STDIN_BACKLOG_LINES} × maxLineBytes (${limit}): it is not reading its stdin, and the message was not sent`);
  }

  async #flush(): Promise<void> {
    const lines = this.#batch;
    this.#batch = [];
    this.#batchChars = 0;
    this.#batchDone = undefined;
    const child = this.#child;
    if (!child || this.#closed || this.#closing || lines.length === 0) return;
    if (!child.stdin.write(lines.length === 1 ? lines[0]! : lines.join(''))) {
      // Both listeners go once either fires: a race against the long-lived #exited promise would leave a
      // reaction on it per full pipe until the child exits (a slow leak under sustained backpressure).
      this.#drain ??= new Promise<void>((resolve) => {
        const done = (): void => {
          child.stdin.off('drain', done);
          child.off('close', done);
          resolve();
        };
        child.stdin.once('drain', done);
        child.once('close', done);
      }).finally(() => (this.#drain = undefined));
      await this.#drain;
    }
  }

  /**
   * stdin close → SIGTERM → SIGKILL, each to the whole process group. Every call resolves once the process
   * is gone: a second one (shutdown while a restart stops it) waits for the same exit, not returning while
   * the child still runs.
   */
  close(): Promise<void> {
    const child = this.#child;
    // Not started yet (still in its preflight or fetching its token): start() sees this and does not spawn.
    if (!child) this.#closing = true;
    if (!child || child.pid === undefined || this.#closed) return Promise.resolve();
    return (this.#stopped ??= this.#stop(child));
  }

  async #stop(child: ChildProcessWithoutNullStreams): Promise<void> {
    this.#closing = true;
    const grace = this.#opts.stopGraceMs ?? 2000;
    const exited = this.#exited!;
    const waitExit = (ms: number) =>
      Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    child.stdin.end();
    if (await waitExit(grace)) return;
    this.#terminate(child.pid!);
    if (await waitExit(grace)) return;
    this.#signal('SIGKILL');
    await exited;
  }

  /** SIGTERM to the server's group; in bubblewrap, to the sandbox's (its init ignores it, the server does not). */
  #terminate(pid: number): void {
    const inner = this.#opts.wrapped ? childrenOf(pid) : [];
    if (inner.length === 0) return this.#signal('SIGTERM');
    for (const child of inner) killGroup(child, 'SIGTERM');
  }

  /** `cut`: why it is killed (a flood), its stdout no longer read. */
  #signal(sig: NodeJS.Signals, cut?: TransportError): void {
    if (cut) (this.#closeReason = cut), this.#child!.stdout.destroy();
    killGroup(this.#child!.pid!, sig);
  }
}
