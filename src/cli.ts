// The command line, loaded by main.ts once it has set up what must come first (see there).
import { renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from './app.js';
import { devTokenRefusal, devTokenType, parseTtl, signDevToken } from './auth/dev-token.js';
import { devKeyExposure } from './auth/dev-key.js';
import { checkConfigFile } from './config-check.js';
import { ConfigError, loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { releaseEarlySignals } from './early-signals.js';
import { audiencesOf } from './edge-auth.js';
import { GatewayError } from './errors.js';
import { closeLogs } from './observability/logger.js';
import { pinsCommand } from './pins-command.js';
import { linksCommand } from './links-command.js';
import { toolsCommand } from './tools-command.js';

const USAGE = `usage:
  switchboard serve [--config FILE]     run the gateway (FILE also from SWITCHBOARD_CONFIG)
  switchboard check-config FILE         validate a config file and what it names (key files, programs); exit 1 on a problem
  switchboard token --tenant T --sub S [--scope S]... [--ttl 12h] [--config FILE] [--key JWK] [--audience URL]
                                        print a development JWT that FILE's gateway accepts (exit 1
                                        when none of its auth.keys verifies the key's tokens, FILE
                                        has no tenant T, or its gateway does not accept --audience)
                                        (key: deploy/dev-keys/dev-private.jwk.json of this package)
  switchboard pins list [--config FILE] [--json]
                                        tool pins: approved hashes, and changed definitions awaiting approval
  switchboard pins approve [--config FILE] (UPSTREAM [TOOL]... | --all) --hash HASH...
                                        approve the changed tool definitions you reviewed, each named by
                                        its pending hash as "pins list" prints it (a definition that changed
                                        since is not approved); without --hash, print what is pending and
                                        approve nothing; needs pinning.file or Redis in FILE
  switchboard pins reject [--config FILE] (UPSTREAM [TOOL]... | --all) --hash HASH...
                                        reject the changed tool definitions you reviewed, by hash as
                                        approve: they stay withheld and leave the queue until the upstream
                                        reports another definition; without --hash, as approve
  switchboard links list [--config FILE] [--sub S] [--upstream U] [--tenant T] [--issuer I] [--json]
                                        users' links to user-oauth upstreams (metadata, never a token);
                                        needs Redis in FILE (else use the admin API)
  switchboard links revoke --sub S --upstream U [--tenant T] [--issuer I] [--config FILE]
                                        delete a user's sealed tokens: their next call asks for consent
  switchboard tools --config FILE [--tenant T] [--json]
                                        start FILE's upstreams and print each endpoint's tool names
                                        (renamed, shortened) and the upstream tool each one reaches,
                                        and the tools left out (a name taken, or against the MCP rule);
                                        exit 1 naming an upstream whose tools could not be listed
token, pins and links without --config: SWITCHBOARD_CONFIG, else this package's deploy/quickstart.yaml
`;

const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));
const QUICKSTART = join(PACKAGE_ROOT, 'deploy', 'quickstart.yaml');

type Values = Record<string, string | string[] | boolean | undefined>;

/** The config of the commands that serve a running gateway (token, pins): the one named, the one serve would use, else the quick start. */
function configOf(values: Values): string {
  return (values.config as string | undefined) ?? (process.env.SWITCHBOARD_CONFIG || QUICKSTART);
}

/**
 * Why a --key file cannot sign, in one line: it came out as a stack trace. Nothing of the file is quoted
 * (a JSON error's message may show its text, and the file holds a private key).
 */
function keyFileUnusable(keyFile: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `${keyFile} does not exist`;
  if (code === 'EACCES') return `${keyFile} cannot be read: permission denied`;
  if (code === 'EISDIR') return `${keyFile} is a directory, not a key file`;
  if (err instanceof SyntaxError) return `${keyFile} is not a JSON Web Key (not valid JSON)`;
  return `${keyFile} cannot sign a token: it must be a private JWK, as deploy/dev-keys/dev-private.jwk.json is (${(err as Error).message})`;
}

/**
 * The token's audience: --audience when the gateway accepts it, else (after saying why) undefined; without
 * it, the first the gateway accepts. One it does not accept was signed and printed (exit 0), and the
 * gateway answered each request of it 401 "the aud claim is not acceptable".
 */
function audienceOf(values: Values, config: Config, file: string): string | undefined {
  const accepted = audiencesOf(config);
  const given = values.audience as string | undefined;
  if (given === undefined) return accepted[0]!;
  if (accepted.includes(given)) return given;
  process.stderr.write(`switchboard token: the gateway of ${file} does not accept the audience ${JSON.stringify(given)} (it accepts ${accepted.join(', ')}); its gateway refuses every request of such a token\n`);
  return undefined;
}

async function token(values: Values): Promise<number> {
  const tenant = values.tenant as string | undefined;
  const sub = values.sub as string | undefined;
  if (!tenant || !sub) {
    process.stderr.write(`switchboard token: --tenant and --sub are required\n${USAGE}`);
    return 2;
  }
  // A usage error like a missing --tenant (it came out as a stack trace), checked before the config is read.
  const ttl = (values.ttl as string | undefined) ?? '12h';
  const ttlSeconds = parseTtl(ttl);
  if (ttlSeconds === undefined) {
    process.stderr.write(`switchboard token: bad --ttl ${JSON.stringify(ttl)}: use e.g. 900, 15m, 12h or 7d\n${USAGE}`);
    return 2;
  }
  const file = configOf(values);
  const config = loadConfig(file);
  if (config.auth.mode !== 'jwt' || !config.auth.issuer) {
    process.stderr.write('switchboard token: that config does not use jwt authentication; no token is needed\n');
    return 2;
  }
  // With jwt, a tenant the config does not name is refused at every endpoint (403): a typo found here, not there.
  const tenants = config.tenants.map((t) => t.name);
  if (!tenants.includes(tenant)) {
    process.stderr.write(`switchboard token: ${file} has no tenant ${JSON.stringify(tenant)} (tenants: ${tenants.join(', ') || 'none'}); its gateway refuses every request of such a token\n`);
    return 1;
  }
  const scopes = ((values.scope as string[] | undefined) ?? []).flatMap((s) => s.split(/[ ,]+/)).filter(Boolean);
  const keyFile = (values.key as string | undefined) ?? join(PACKAGE_ROOT, 'deploy', 'dev-keys', 'dev-private.jwk.json');
  const audience = audienceOf(values, config, file);
  if (audience === undefined) return 1;
  const { claims } = config.auth;
  const jwt = await signDevToken({ keyFile, issuer: config.auth.issuer, audience, tenant, subject: sub, scopes, ttlSeconds, tenantClaim: claims.tenant, scopesClaim: claims.scopes, typ: devTokenType(config.auth.tokenTypes) }).catch((err: unknown) => {
    process.stderr.write(`switchboard token: --key ${keyFileUnusable(keyFile, err)}\n`);
    return undefined;
  });
  if (jwt === undefined) return 1;
  // Only a token the gateway would verify: printing one it refuses sends the user chasing a 401.
  const refusal = await devTokenRefusal(jwt, keyFile, config.auth);
  if (refusal) {
    process.stderr.write(`switchboard token: the gateway of ${file} does not trust ${keyFile}: ${refusal}. For development, add the key's public half to auth.keys\n`);
    return 1;
  }
  process.stdout.write(`${jwt}\n`);
  return 0;
}

async function serve(file: string): Promise<void> {
  // The same checks as check-config: what it calls a problem stops serve here, before anything starts.
  const { config, warnings } = checkConfigFile(file, process.env, true);
  const app = await buildApp(config, { configFile: file });
  const { logger } = app;
  for (const w of warnings) logger.warn({ config: file }, `config: ${w}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, graceMs: config.server.shutdownGraceMs }, 'shutting down: draining requests in flight');
    // The log's last lines (a write may be in flight) go out before the exit, for at most 2 s.
    app.close(config.server.shutdownGraceMs).then(
      () => {
        logger.info({ signal }, 'stopped');
        return closeLogs(logger, 2000).then(() => process.exit(0));
      },
      (err) => {
        logger.error({ err }, 'error during shutdown');
        void closeLogs(logger, 2000).then(() => process.exit(1));
      },
    );
  };
  // SIGHUP: read the file again and apply what changed (README "Reloading the config"). The outcome is logged.
  process.on('SIGHUP', () => void app.reload('SIGHUP'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Ours answer from here (the same tick: no signal falls between): main.ts's early ones go.
  const hupWhileStarting = releaseEarlySignals();
  let address: string;
  try {
    address = await app.listen();
  } catch (err) {
    // Stopped while starting: the stop's handler ends the process (exit 0), not this failure.
    if (stopping) return;
    throw err;
  }
  const paths = config.endpoints.map((e) => e.path);
  logger.info({ address, endpoints: paths }, `switchboard listening on ${address}`);
  // The liveness address: the metrics listener's when it runs (its own port and cap), else the MCP one's.
  writeAddressFile(app.metricsUrl ?? address, logger);
  // The file may have changed after it was read above and before our handler was in place: read it again,
  // once, now that the gateway is up (an unchanged file is "nothing to apply").
  if (hupWhileStarting) {
    logger.info({ signal: 'SIGHUP' }, 'a SIGHUP came while the gateway was starting: reading the config again');
    void app.reload('SIGHUP');
  }
}

/**
 * SWITCHBOARD_ADDRESS_FILE (the image sets it): where this gateway answers /healthz, written once it listens,
 * for the image's HEALTHCHECK to probe. Guessing 127.0.0.1:${SWITCHBOARD_PORT||8080} left a container whose
 * mounted config chose another port or host unhealthy for good. The metrics listener when it runs: the MCP
 * one closes new connections at accept once server.maxConnections are open, and a check refused there had a
 * healthy gateway at its cap replaced (Swarm, autoheal). A wildcard host is written as loopback; a path dropped.
 */
function writeAddressFile(address: string, logger: { warn(o: object, m: string): void }): void {
  const file = process.env.SWITCHBOARD_ADDRESS_FILE;
  if (!file) return;
  const url = new URL(address);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  try {
    // Whole or not at all: the check may read it at any moment.
    writeFileSync(`${file}.new`, `${url.origin}\n`);
    renameSync(`${file}.new`, file);
  } catch (err) {
    logger.warn({ file, err: (err as Error).message }, 'SWITCHBOARD_ADDRESS_FILE cannot be written: a health check that reads it falls back to port SWITCHBOARD_PORT, else 8080');
  }
}

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  tenant: { type: 'string' },
  sub: { type: 'string' },
  scope: { type: 'string', multiple: true },
  ttl: { type: 'string' },
  key: { type: 'string' },
  audience: { type: 'string' },
  upstream: { type: 'string' },
  issuer: { type: 'string' },
  all: { type: 'boolean' },
  json: { type: 'boolean' },
  hash: { type: 'string', multiple: true },
} as const;

type Option = keyof typeof OPTIONS;

/**
 * The options each command reads. One parser serves them all, so an option another command takes was
 * accepted and ignored: `pins approve --all --upstream github` approved every upstream's definitions.
 */
const TAKES: Readonly<Record<string, readonly Option[]>> = {
  serve: ['config'],
  'check-config': ['config'],
  token: ['config', 'tenant', 'sub', 'scope', 'ttl', 'key', 'audience'],
  pins: ['config', 'all', 'json', 'hash'],
  links: ['config', 'sub', 'upstream', 'tenant', 'issuer', 'json'],
  tools: ['config', 'tenant', 'json'],
};

/** The first option given that `command` does not read, as written (`--upstream`), or undefined. */
function foreignOption(command: string, values: Values): string | undefined {
  const takes = TAKES[command];
  if (!takes) return undefined;
  const foreign = Object.keys(values).find((k) => values[k] !== undefined && !takes.includes(k as Option));
  return foreign === undefined ? undefined : `--${foreign}`;
}

/**
 * The first argument `command` does not read, or undefined. Each read the arguments it takes and dropped
 * the rest unsaid: `token --scope read write` printed a token without "write", `tools --config a.yaml
 * b.yaml` listed a.yaml's tools alone. serve and check-config count their FILEs themselves (their own words).
 */
function strayArgument(command: string, positionals: readonly string[], values: Values): string | undefined {
  switch (command) {
    case 'token':
      return positionals[0];
    case 'links':
      return positionals[1];
    case 'pins':
      return positionals[0] === 'list' ? positionals[1] : undefined;
    case 'tools':
      return positionals[values.config === undefined ? 1 : 0];
    default:
      return undefined;
  }
}

function checkConfig(file: string): number {
  const loaded = checkConfigFile(file, process.env, true);
  const { config } = loaded;
  // What serve says of the development key at its start (edge-auth.ts), said here too: not among the
  // file's warnings, which serve also logs, or serve would say it twice.
  const exposed = devKeyExposure(config);
  const warnings = exposed ? [...loaded.warnings, exposed.message] : loaded.warnings;
  for (const w of warnings) process.stderr.write(`${file}: warning: ${w}\n`);
  const counts = `${config.upstreams.length} upstreams, ${config.endpoints.length} endpoints`;
  const note = warnings.length === 0 ? '' : `, with ${warnings.length} warning${warnings.length === 1 ? '' : 's'} above`;
  process.stdout.write(`${file}: ok (${counts})${note}\n`);
  return 0;
}

async function run(command: string | undefined, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true });
  const foreign = command === undefined ? undefined : foreignOption(command, values);
  if (foreign) {
    process.stderr.write(`switchboard ${command}: ${foreign} is not an option of this command\n${USAGE}`);
    return 2;
  }
  const stray = command === undefined ? undefined : strayArgument(command, positionals, values);
  if (stray !== undefined) {
    process.stderr.write(`switchboard ${command}: ${JSON.stringify(stray)} is not an argument of this command\n${USAGE}`);
    return 2;
  }
  switch (command) {
    case 'token':
      return await token(values);
    case 'pins':
      return await pinsCommand({ action: positionals[0], args: positionals.slice(1), config: configOf(values), all: values.all === true, json: values.json === true, hashes: ((values.hash as string[] | undefined) ?? []).map((h) => h.toLowerCase()) }, USAGE);
    case 'links':
      return await linksCommand(
        { action: positionals[0], config: configOf(values), subject: values.sub, upstream: values.upstream, tenant: values.tenant, issuer: values.issuer, json: values.json === true },
        USAGE,
      );
    case 'tools':
      return await toolsCommand({ config: values.config ?? positionals[0], tenant: values.tenant, json: values.json === true });
    case 'serve': {
      const file = values.config ?? positionals[0] ?? process.env.SWITCHBOARD_CONFIG;
      // `serve a.yaml b.yaml` served a.yaml alone, saying nothing of b.yaml (and --config beside a FILE, the FILE).
      if (positionals.length + (values.config === undefined ? 0 : 1) > 1) {
        process.stderr.write(`switchboard serve: one config file (got ${positionals.length + (values.config === undefined ? 0 : 1)}): one gateway serves one file\n${USAGE}`);
        return 2;
      }
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
      // `check-config configs/*.yaml` checked the first file alone and said ok (exit 0) for all of them.
      if (positionals.length + (values.config === undefined ? 0 : 1) > 1) {
        process.stderr.write(`switchboard check-config: one FILE at a time (got ${positionals.length + (values.config === undefined ? 0 : 1)}); for several: for f in FILES; do switchboard check-config "$f"; done\n`);
        return 2;
      }
      return checkConfig(file);
    }
    default:
      process.stderr.write(USAGE);
      return command === undefined ? 0 : 2;
  }
}

/**
 * Whether help was asked for: `help`, or --help / -h anywhere before a `--`. Answered on stdout, exit 0
 * (`switchboard --help | less`); before, a command's --help was an unknown option (exit 2), as was -h.
 */
function helpAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  const args = end === -1 ? argv : argv.slice(0, end);
  return argv[0] === 'help' || args.some((a) => a === '--help' || a === '-h');
}

async function main(argv: string[]): Promise<number> {
  if (helpAsked(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [command, ...rest] = argv;
  try {
    return await run(command, rest);
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`switchboard: ${(err as Error).message}\n${USAGE}`);
      return 2;
    }
    // Failures with a message written for the user: no stack trace.
    if (err instanceof ConfigError || err instanceof GatewayError) {
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
