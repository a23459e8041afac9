#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/load.js';

const USAGE = `usage:
  switchboard serve [--config FILE]     run the gateway (FILE also from SWITCHBOARD_CONFIG)
  switchboard check-config FILE         validate a config file and exit
`;

async function serve(file: string): Promise<void> {
  const config = loadConfig(file);
  const app = await buildApp(config);
  const { logger } = app;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const address = await app.listen();
  const paths = config.endpoints.map((e) => e.path);
  logger.info({ address, endpoints: paths }, `switchboard listening on ${address}`);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, options: { config: { type: 'string', short: 'c' } }, allowPositionals: true });
  try {
    switch (command) {
      case 'serve': {
        const file = values.config ?? positionals[0] ?? process.env.SWITCHBOARD_CONFIG;
        if (!file) {
          process.stderr.write(`switchboard: no config file; pass --config FILE or set SWITCHBOARD_CONFIG\n${USAGE}`);
          return 2;
        }
        await serve(file);
        return -1; // keep running
      }
      case 'check-config': {
        const file = positionals[0] ?? values.config;
        if (!file) {
          process.stderr.write(USAGE);
          return 2;
        }
        const cfg = loadConfig(file);
        process.stdout.write(`${file}: ok (${cfg.upstreams.length} upstreams, ${cfg.endpoints.length} endpoints)\n`);
        return 0;
      }
      default:
        process.stderr.write(USAGE);
        return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`switchboard: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`switchboard: ${(err as Error).stack ?? err}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => {
  if (code >= 0) process.exit(code);
});
