/**
 * `npm run sandbox`: the two upstream simulators alone, for client teams and
 * for running the gateway against them from another process.
 */
import { ConfigError, loadSandboxConfig } from '../src/config.ts';
import { describeSandbox, startSandbox } from './index.ts';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadSandboxConfig>;
  try {
    config = loadSandboxConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }

  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  try {
    sandbox = await startSandbox(config);
  } catch (error) {
    // Typically EADDRINUSE: one line is more useful than a stack trace here.
    console.error(
      `The sandbox could not start: ${error instanceof Error ? error.message : String(error)}`,
    );
    process.exit(1);
  }
  console.log(describeSandbox(sandbox));
  console.log('\nPress Ctrl+C to stop.');

  let stopping = false;
  const shutdown = (): void => {
    if (stopping) {
      return;
    }
    stopping = true;
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('Sandbox did not close cleanly:', error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

await main();
