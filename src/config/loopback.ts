import { isIP } from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * The one loopback rule: which host names and addresses never leave the machine. Config validation
 * (auth "none" only on loopback), the DNS-rebinding guard and the default Host allow-list all ask it.
 */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || (host.startsWith('127.') && isIP(host) === 4);
}
