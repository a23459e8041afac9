import { readFileSync } from 'node:fs';
import { GatewayError } from '../errors.js';

/**
 * An upstream's client secret, read from its file. The secret is read when the upstream's first
 * credential is built, for a per-session upstream as a session opens it, so a failure may reach a
 * client: it hears the upstream and the reason (ENOENT, EACCES), never the host path. The operator
 * gets the path from the cause, which the incident log line carries.
 */
export function readSecretFile(upstream: string, file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    const refused = new GatewayError('SWB_CONFIG_INVALID', `upstream "${upstream}": its auth.clientSecretFile cannot be read (${reason}); an operator can find the file in the gateway's config and log`, { upstream });
    refused.cause = err;
    throw refused;
  }
}
