import { GatewayError } from '../errors.js';

/** What a system error of listen (or of resolving its host) means, in the words an operator acts on. */
const REASONS: Record<string, string> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied (a port below 1024 needs the privilege to bind it)',
  EADDRNOTAVAIL: 'address not available (no interface of this machine has it)',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
};

/**
 * Listens, and turns a failure to (port in use, no permission, an address this machine does not have)
 * into one line naming the address, what went wrong and the key that chose it, which serve prints as it
 * is: the bare system error came out as a stack trace that named no key. Other errors pass unchanged.
 */
export async function listenOn<T>(key: string, host: string, port: number, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code !== 'string' || !/^E[A-Z_]+$/.test(code)) throw err;
    const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    throw new GatewayError('SWB_CONFIG_INVALID', `cannot listen on ${address}: ${REASONS[code] ?? code} (${key})`, { address, key, cause: code });
  }
}
