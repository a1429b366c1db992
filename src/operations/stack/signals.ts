/**
 * Resolves on the first SIGINT or SIGTERM. The listeners stay installed until the process
 * ends: under `npm run` one Ctrl-C arrives several times (from the terminal, relayed by npm
 * and by tsx), and a repeat that found no listener would end the process in the middle of
 * its ordered shutdown.
 */
export function firstShutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
