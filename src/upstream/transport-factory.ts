import type { RemoteUpstreamConfig, StdioUpstreamConfig, UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { Transport } from '../transport/transport.js';
import type { BearerSource } from './bearer-source.js';
import { ClientCredentials } from './client-credentials.js';
import { PerUserRemotes, remoteTransport } from './per-user-remotes.js';
import { RemoteAgents } from './remote-agents.js';
import { SubjectTokens } from './subject-tokens.js';
import type { UpstreamUser } from './upstream-user.js';
import type { ProcessCredential, UserConsent } from './user-consent.js';
import { isRequest } from '../jsonrpc/types.js';
import { killProcessesOf, planLaunch, PrivateHome, SandboxProbe, SandboxRefusal, UidPool, SANDBOX_GID, type LaunchPlan, type Reaped } from '../sandbox/index.js';
import { InheritedDescriptors } from '../sandbox/inherited-descriptors.js';
import { ProcessGroups } from './process-groups.js';
import { StdioTransport, type StdioOptions } from './stdio-transport.js';

/** Kills what runs as a pooled uid before it goes back (killProcessesOf; a test's stands in for a process that outlives it). */
export type UidReaper = (uid: number, gid: number) => Promise<Reaped>;

interface Remote {
  agents: RemoteAgents;
  credentials: BearerSource | undefined;
  /** Transports open on it: a remote a reload superseded closes with its last one. */
  links: number;
}

/**
 * Builds the link for each upstream instance. Remote upstreams share their connection pools per upstream
 * (RemoteAgents: keep-alive, timeouts, a bounded number of connections for requests) and one token cache; an upstream with a
 * per-user credential has them per user instead (see PerUserRemotes).
 */
export class UpstreamTransports {
  /**
   * Per upstream config, not per name: a reload that changes an upstream (its URL, its credential) gives
   * its new pool a config of its own, whose instances must not get the old settings' token or connections.
   */
  readonly #remotes = new Map<RemoteUpstreamConfig, Remote>();
  /** Each upstream's newest config: the remotes of the others are closed with their last link. */
  readonly #latest = new Map<string, RemoteUpstreamConfig>();
  /** Each user's latest validated token (the edge records them), for token exchange. */
  readonly subjectTokens: SubjectTokens;
  readonly #perUser: PerUserRemotes;
  readonly #probe = new SandboxProbe();
  readonly #uids = new UidPool();
  readonly #reap: UidReaper;
  /** Per upstream, the sandbox uids withheld from the pool for good (their processes could not be made sure gone): read by the metrics. */
  readonly uidsWithheld = new Map<string, number>();
  /** Every child's process group dies with the gateway. */
  readonly #groups = new ProcessGroups();
  /** What the gateway was started with open, which no child gets. */
  readonly #inherited = new InheritedDescriptors();

  /** User consent for user-oauth upstreams (the gateway sets it when the vault is configured). */
  set consent(c: UserConsent | undefined) {
    this.#perUser.consent = c;
  }

  constructor(subjectTokens = new SubjectTokens(), reap: UidReaper = killProcessesOf) {
    this.subjectTokens = subjectTokens;
    this.#reap = reap;
    this.#perUser = new PerUserRemotes(subjectTokens, (u) => new RemoteAgents(u));
  }

  create = (upstream: UpstreamConfig, logger: Logger, owner?: UpstreamUser): Transport => {
    if (upstream.transport === 'stdio') return this.#stdio(upstream, logger, owner);
    if (upstream.auth?.type === 'token-exchange' || upstream.auth?.type === 'user-oauth') return this.#perUser.create(upstream, upstream.auth, owner, logger);
    const remote = this.#remote(upstream, logger);
    const transport = remoteTransport(upstream, remote.agents, remote.credentials, logger);
    const close = transport.close.bind(transport);
    let closed = false;
    // long-lived: one per remote instance's link
    transport.close = async () => {
      await close();
      if (closed) return;
      closed = true;
      remote.links--;
      this.#release(upstream);
    };
    return transport;
  };

  /** A stdio upstream's process, in the sandbox its profile describes; refused plans fail at its start. */
  #stdio(upstream: StdioUpstreamConfig, logger: Logger, owner: UpstreamUser | undefined): Transport {
    // First, as it may throw (no user to serve, a client secret file it cannot read): nothing is taken yet.
    const user = this.#stdioToken(upstream, owner);
    const name = upstream.name;
    let pooled: { uid: number; gid: number } | undefined;
    let home: PrivateHome | undefined;
    let spawning = false; // past the preflight and the token: what fails now is the program's start (see hostPathsHidden)
    // What is started is known only in the preflight, once the pool has a user for it (its walk of /proc
    // is awaited, off the event loop). The transport reads these options at its spawn: the plan fills them.
    const options: StdioOptions = {
      command: upstream.command,
      args: [],
      env: {},
      // Fail closed: a refused plan or a sandbox the host cannot build never starts the program.
      preflight: async () => {
        let plan: LaunchPlan;
        try {
          // A root gateway gives every sandboxed instance a user of its own, back to the pool when it
          // exits (onExit, which the transport calls also when it never starts, a refusal here included).
          if (upstream.sandbox !== 'none' && !upstream.sandbox.user && process.getuid?.() === 0) pooled = { uid: await this.#uids.acquire(), gid: SANDBOX_GID };
          // Named now, made only when its process is spawned (prepare): a start refused before that costs nothing.
          if (upstream.sandbox !== 'none' && upstream.sandbox.type === 'limits') home = new PrivateHome(pooled ?? configuredUser(upstream.sandbox.user));
          plan = planLaunch(upstream, undefined, pooled, home?.path);
          await this.#probe.check(plan);
        } catch (err) {
          // The client hears the name and an incident id; the reason (host paths, bwrap's words) is logged.
          const refused = new SandboxRefusal(name, err);
          logger.error({ incident: refused.incident, reason: refused.reason }, 'upstream sandbox refused');
          throw refused;
        }
        Object.assign(options, { command: plan.file, args: plan.args, cwd: plan.cwd, env: plan.env, uid: plan.uid, gid: plan.gid, wrapped: plan.profile === 'bubblewrap' });
        logger.info(plan.summary, 'starting upstream process');
        logger.debug({ file: plan.file, args: plan.args }, 'upstream command line');
      },
      secretEnv: user?.env,
      prepare: () => ((spawning = true), home?.make()),
      maxLineBytes: upstream.maxLineBytes,
      onExit: () => this.#reclaim(name, pooled, home, logger),
      groups: this.#groups,
      inherited: this.#inherited,
      logger,
    };
    return hostPathsHidden(checkedRequests(new StdioTransport(options), user?.check), name, () => spawning, logger);
  }

  /**
   * Once an instance's process is gone: a detached helper of it dies before its uid serves another, and
   * before its home goes. The kill runs beside the event loop; the uid goes back only once it is done, and
   * never when it could not be made sure of (a later instance would share a user with what runs on).
   */
  #reclaim(upstream: string, pooled: { uid: number; gid: number } | undefined, home: PrivateHome | undefined, logger: Logger): void {
    if (!pooled) return void home?.remove();
    void this.#reap(pooled.uid, pooled.gid).then(({ cleared, reason }) => {
      home?.remove();
      if (cleared) return this.#uids.release(pooled.uid);
      this.uidsWithheld.set(upstream, (this.uidsWithheld.get(upstream) ?? 0) + 1);
      logger.error({ uid: pooled.uid, reason }, 'sandbox user id withheld from the pool: its processes could not be made sure gone');
    });
  }

  /**
   * A stdio upstream with `auth`: its user's token, taken afresh at each start (exchanged, or read from the
   * vault and refreshed) and put in the variable `tokenEnv`. Without consent the start fails with the
   * -32042 that asks for it, and no process is started.
   */
  #stdioToken(u: StdioUpstreamConfig, owner: UpstreamUser | undefined): { env: () => Promise<Record<string, string>>; check?: ProcessCredential['check'] } | undefined {
    if (!u.auth || !u.tokenEnv) return undefined;
    if (!owner) throw new GatewayError('SWB_CONFIG_INVALID', `upstream "${u.name}" starts each process with its user's token, so each instance needs the user it serves (sharing: per-session)`, { upstream: u.name });
    const source = this.#perUser.processCredential(u, u.auth, owner);
    const variable = u.tokenEnv;
    return { env: async () => ({ [variable]: await source.token() }), check: source.check };
  }

  #remote(u: RemoteUpstreamConfig, logger: Logger): Remote {
    let r = this.#remotes.get(u);
    if (!r) {
      const agents = new RemoteAgents(u);
      const renewalFailed = (err: Error) => logger.warn({ err: err.message }, 'renewing the upstream token failed; the one held is used until it expires');
      r = { agents, credentials: u.auth?.type === 'client-credentials' ? new ClientCredentials(u.auth, agents.requests, u.http.bodyTimeoutMs, renewalFailed) : undefined, links: 0 };
      this.#remotes.set(u, r);
      const before = this.#latest.get(u.name);
      this.#latest.set(u.name, u);
      if (before) this.#release(before);
    }
    r.links++;
    return r;
  }

  /** A superseded config's remote goes once nothing uses it (a retiring pool finishes its calls on it). */
  #release(u: RemoteUpstreamConfig): void {
    const r = this.#remotes.get(u);
    if (!r || r.links > 0 || this.#latest.get(u.name) === u) return;
    this.#remotes.delete(u);
    void r.agents.close();
  }

  async close(): Promise<void> {
    await Promise.all([...this.#remotes.values()].map((r) => r.agents.close()));
    this.#remotes.clear();
    this.#latest.clear();
    await this.#perUser.close();
  }
}

/**
 * A process holding a user's token, whose every request first checks that it still may: a consent revoked
 * (or replaced) since the process started, or an exchanged token that can no longer be had (the user's
 * expired), stops it, and the request is answered the check's error (-32042 with a new consent link after a
 * revocation). Without this a revocation left the session's process running, and every later call still
 * acted with the revoked account. An exchanged token renewed or narrowed (details.replaced: the old one is
 * still good) has the process replaced instead (onreplaced): it is sent no request again, this one and every
 * later one refused as never sent (they go to the new process), but what its calls in flight still need (a
 * cancellation, an answer to its own request) still reaches it, and it finishes them. The checks are chained
 * so that messages reach the process in the order they were sent (a cancellation never before its request).
 */
function checkedRequests(transport: StdioTransport, check: ProcessCredential['check'] | undefined): StdioTransport {
  if (!check) return transport;
  const send = transport.send.bind(transport);
  const link: Transport = transport; // its owner sets onreplaced
  let checked: Promise<unknown> = Promise.resolve();
  let replaced: GatewayError | undefined;
  // long-lived: one per process holding a user's token
  transport.send = (m) => {
    const now = checked.then(async () => {
      const refused = isRequest(m) ? (replaced ?? (await check())) : undefined;
      if (!refused) return;
      if (!replaced && refused.details?.replaced === true && link.onreplaced) {
        replaced = refused;
        link.onreplaced();
      }
      if (refused !== replaced) void transport.close();
      throw refused;
    });
    checked = now.catch(() => {});
    return now.then(() => send(m));
  };
  return transport;
}

/**
 * A process that could not be started (spawn's EACCES or ENOENT, its home not made) fails with the host's
 * paths in its words, which reached every client of the upstream as the instance's last failure. Clients
 * hear the upstream and an incident id, as for a sandbox refusal; the log has the reason.
 */
function hostPathsHidden(transport: StdioTransport, name: string, spawning: () => boolean, logger: Logger): StdioTransport {
  const start = transport.start.bind(transport);
  // long-lived: one per process
  transport.start = () =>
    start().catch((err: unknown) => {
      if (!spawning() || err instanceof GatewayError) throw err;
      const refused = new SandboxRefusal(name, err);
      logger.error({ incident: refused.incident, reason: refused.reason }, 'upstream process could not be started');
      throw refused;
    });
  return transport;
}

/** The user a root gateway starts a configured `sandbox.user` as; a gateway that is not root starts its own. */
function configuredUser(user: { uid: number; gid: number } | undefined): { uid: number; gid: number } | undefined {
  return user && process.getuid?.() === 0 ? user : undefined;
}
