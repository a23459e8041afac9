import { hkdfSync, randomBytes } from 'node:crypto';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';

/** Key material as configured: the key that seals, and older keys that still open (rotation). */
export interface RequestStateKeyring {
  current: string;
  previous: readonly string[];
}

/** A key ready for use: its short public id (in every token it seals) and the AES-256-GCM key. */
export interface DerivedKey {
  id: Buffer;
  aes: Buffer;
}

export const MIN_KEY_CHARS = 32;
export const KEY_ID_BYTES = 3;

const HEX_32 = /^[0-9a-fA-F]{64}$/;
const BASE64_32 = /^(?:[A-Za-z0-9+/]{43}=?|[A-Za-z0-9_-]{43})$/;

// Fixed labels: every replica derives the same keys from the same material, and a key configured here
// yields nothing usable anywhere else (HKDF with another label gives unrelated bytes).
const PASSPHRASE_INFO = 'switchboard requestState v1: passphrase';
const AES_INFO = 'switchboard requestState v1: aes-256-gcm';
const ID_INFO = 'switchboard requestState v1: key id';

function hkdf(ikm: Buffer, info: string, length: number): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), info, length));
}

/**
 * The 32 secret bytes a configured string stands for: 64 hex digits, or 43/44 characters of base64 or
 * base64url, are the bytes themselves; any other string (at least 32 characters) is a passphrase,
 * stretched with HKDF-SHA256. HKDF adds no strength to a guessable phrase: generate keys with
 * `openssl rand -base64 32`.
 */
export function keyBytes(material: string): Buffer {
  if (material.length < MIN_KEY_CHARS) throw new Error(`a requestState key needs at least ${MIN_KEY_CHARS} characters`);
  if (HEX_32.test(material)) return Buffer.from(material, 'hex');
  if (BASE64_32.test(material)) return Buffer.from(material, 'base64');
  return hkdf(Buffer.from(material, 'utf8'), PASSPHRASE_INFO, 32);
}

/**
 * The sealing key and the key id come from the secret through separate HKDF labels, so the id printed
 * in every token says nothing about the AES key.
 */
export function deriveKey(material: string): DerivedKey {
  const secret = keyBytes(material);
  return { id: hkdf(secret, ID_INFO, KEY_ID_BYTES), aes: hkdf(secret, AES_INFO, 32) };
}

/**
 * The keys this process seals and opens requestState with. Without a configured key a random one is
 * made for this process: a single replica works as before (a restart loses the held upstream calls
 * anyway), but replicas cannot open each other's state, hence the warning when Redis joins replicas.
 * Key material is never logged.
 */
export function resolveRequestStateKeys(config: Pick<Config, 'modern' | 'store'>, logger: Pick<Logger, 'warn' | 'info'>): RequestStateKeyring {
  const { requestStateKey, requestStatePreviousKeys } = config.modern;
  if (requestStateKey !== undefined) return { current: requestStateKey, previous: requestStatePreviousKeys };
  const hint = 'set modern.requestStateKey (or SWITCHBOARD_REQUEST_STATE_KEY) to the same value on every replica';
  if (config.store.redis) {
    logger.warn(`no requestState key configured: this replica made a random one, so replicas will not accept each other's requestState (a retry that lands on another replica fails); ${hint}`);
  } else {
    logger.info(`no requestState key configured: using a random key for this process (one replica); with several replicas, ${hint}`);
  }
  return { current: randomBytes(32).toString('base64url'), previous: [] };
}
