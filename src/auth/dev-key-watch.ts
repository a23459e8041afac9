import type { Config } from '../config/schema.js';
import { beyondLoopback, DEV_KEY_RISK, devKeyExposure, holdsPublishedDevKey } from './dev-key.js';
import type { KeySetFetchLog } from './key-set-fetch.js';

/** switchboard_auth_development_key_exposed. */
interface Gauge {
  set(value: number): void;
}

/**
 * Whether the gateway trusts the published development key beyond loopback (dev-key.ts), from either place
 * it takes keys from: auth.keys, known at each start and reload, and the issuer's key set (auth.jwksUrl),
 * known only once fetched (jose fetches it for the first token, then when it is past its age or a token
 * names a kid it lacks). That set was never looked at: an issuer publishing the key (a development identity
 * provider set up with it) let development-key tokens in with nothing said. Said as a warn line and the gauge,
 * which reads 1 while either holds the key. The edge's and the admin API's key set fetches both tell it
 * (keySets): each fetch is the verdict on the set, at most once per cooldown, never per request.
 */
export class DevKeyWatch {
  readonly #gauge: Gauge;
  readonly #log: KeySetFetchLog;
  #config: Config;
  #inFiles = false;
  /** Whether the last key set fetched from auth.jwksUrl held the key. */
  #inKeySet = false;
  /** What the Authenticators' key set fetches are given: their failures go to the log, their keys here. */
  readonly keySets: KeySetFetchLog;

  constructor(config: Config, gauge: Gauge, log: KeySetFetchLog) {
    this.#gauge = gauge;
    this.#log = log;
    this.#config = config;
    this.keySets = { warn: (obj, msg) => log.warn(obj, msg), keySet: (keys) => this.#fetched(keys) };
    this.configure(config);
  }

  /** At the start and at every reload (one may bring the key in): a warn line for each place that holds it. */
  configure(config: Config): void {
    // Another URL is another key set: what the last one held says nothing of it.
    if (config.auth.jwksUrl !== this.#config.auth.jwksUrl) this.#inKeySet = false;
    this.#config = config;
    const exposed = devKeyExposure(config);
    this.#inFiles = exposed !== undefined;
    if (exposed) this.#log.warn({ keys: exposed.files }, exposed.message);
    this.#sayKeySet();
    this.#show();
  }

  #fetched(keys: readonly object[]): void {
    const was = this.#inKeySet;
    this.#inKeySet = holdsPublishedDevKey(keys);
    if (this.#inKeySet && !was) this.#sayKeySet();
    this.#show();
  }

  /** How the gateway is reached beyond loopback while the key set last fetched held the key; else undefined. */
  #keySetReach(): string | undefined {
    const c = this.#config;
    return this.#inKeySet && c.auth.mode === 'jwt' && c.auth.jwksUrl !== undefined ? beyondLoopback(c) : undefined;
  }

  /** Never the URL: it can carry credentials. */
  #sayKeySet(): void {
    const where = this.#keySetReach();
    if (where === undefined) return;
    this.#log.warn({ keySet: 'auth.jwksUrl' }, `the key set of auth.jwksUrl holds the published development key (kid switchboard-dev-1 of deploy/dev-keys, whose private half ships with Switchboard) and ${where}: ${DEV_KEY_RISK} (have auth.jwksUrl serve only them)`);
  }

  #show(): void {
    this.#gauge.set(this.#inFiles || this.#keySetReach() !== undefined ? 1 : 0);
  }
}
