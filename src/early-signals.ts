/**
 * Signals that come before `serve` has set up its own handlers: while the gateway's modules load (about
 * 1 s from dist/, 3 s under tsx) and its app is built. With no handler in place a SIGHUP (a `systemctl
 * reload`, a ConfigMap reloader right after a start) killed the gateway (exit by signal, 129), and
 * SIGTERM/SIGINT ended it by signal (143, 130) where a stop exits 0. main.ts installs these before it
 * loads anything else; serve takes over (releaseEarlySignals) once its handlers are in place.
 * No imports: this module is loaded first, and must load at once.
 */
let hupWhileStarting = false;

const onHup = (): void => {
  hupWhileStarting = true;
};

// Nothing is started yet (no listener, no upstream process, no replica registered): nothing to drain.
const onStop = (): void => process.exit(0);

export function holdEarlySignals(): void {
  process.on('SIGHUP', onHup);
  process.on('SIGTERM', onStop);
  process.on('SIGINT', onStop);
}

/** Removes the early handlers; whether a SIGHUP came while they were in place (serve reads its config again then). */
export function releaseEarlySignals(): boolean {
  process.off('SIGHUP', onHup);
  process.off('SIGTERM', onStop);
  process.off('SIGINT', onStop);
  const hup = hupWhileStarting;
  hupWhileStarting = false;
  return hup;
}
