/**
 * When a forward gives up on an owner that has not started its answer. Not after a fixed time alone: a
 * live owner may take long before its first byte (a slow tools/call under server.responseMode json, whose
 * headers come with its result), and a 503 "retry" then lost the result and invited a second run of a
 * call still running there. So every `everyMs` without an answer the owner's heartbeat is asked: a live
 * owner is waited for; one whose heartbeat lapsed (dead, or frozen past replicaTtlMs), or that cannot be
 * asked (the store is away: as before, nothing proves it is there), calls `silent`. Returns the stop.
 */
export function watchSilence(everyMs: number, alive: () => Promise<boolean>, silent: () => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const check = (): void => {
    alive().then(
      (ok) => settle(ok),
      () => settle(false),
    );
  };
  const settle = (ok: boolean): void => {
    if (stopped) return;
    if (ok) timer = setTimeout(check, everyMs);
    else {
      stopped = true;
      silent();
    }
  };
  timer = setTimeout(check, everyMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
