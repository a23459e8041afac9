/**
 * The admin API's OpenAPI 3.1 document, written by hand and served at /openapi.json. Hand-written
 * rather than generated (@fastify/swagger): no runtime dependency for ten routes, and a test holds it
 * to the code both ways (every route documented, every documented route served, every answer valid
 * against its schema), which generation from route schemas would not do for the answers.
 */

const str = { type: 'string' };
const int = { type: 'integer', minimum: 0 };
const strings = { type: 'array', items: str };
const nullable = (t: string) => ({ type: [t, 'null'] });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = json(ref('Error'), 'refused or failed; see error.message');
/** 503 among them: a JWT that cannot be checked now (the issuer's key set unreachable). */
const refusals = { '401': error, '403': error, '503': error };

const named = { type: 'object', required: ['added', 'removed', 'changed', 'unchanged'], properties: { added: strings, removed: strings, changed: strings, unchanged: strings } };

const schemas = {
  Error: { type: 'object', required: ['error'], properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: str, message: str } } } },
  Session: {
    type: 'object',
    required: ['id', 'replica', 'replicaAlive', 'era', 'transport', 'protocolVersion', 'issuer', 'subject', 'tenant', 'endpoint', 'ageSeconds', 'inflight'],
    properties: {
      id: str,
      replica: { ...nullable('string'), description: 'the replica holding the session; null: released by a replica that shut down (the next request takes it over)' },
      replicaAlive: { type: 'boolean', description: "whether that replica's heartbeat is current (always true for the answering replica's own sessions)" },
      era: { enum: ['legacy', 'modern'] },
      transport: { enum: ['streamable-http', 'sse', 'modern'] },
      protocolVersion: nullable('string'),
      issuer: str,
      subject: str,
      tenant: str,
      endpoint: str,
      ageSeconds: { type: 'number', minimum: 0 },
      openedAt: { type: 'string', format: 'date-time', description: 'when it opened (absent in the rows of a replica on an older release)' },
      inflight: { type: ['integer', 'null'], minimum: 0, description: 'null for a session whose holder did not answer (dead, or slow): only its holder knows' },
    },
  },
  EndedSession: {
    type: 'object',
    required: ['id', 'endedBy', 'holder'],
    properties: {
      id: str,
      endedBy: { ...str, description: "the replica that ended it: its holder, or the answering replica when it removed a dead or released holder's record" },
      holder: { ...nullable('string'), description: 'the replica that held it (null: released)' },
    },
  },
  Instance: {
    type: 'object',
    required: ['pid', 'state', 'circuit', 'inflight', 'backoffAttempt', 'lastError'],
    properties: { pid: nullable('integer'), state: { enum: ['starting', 'ready', 'backoff', 'stopped'] }, circuit: { enum: ['closed', 'open', 'half-open'] }, inflight: int, backoffAttempt: int, lastError: nullable('string') },
  },
  Upstream: {
    type: 'object',
    required: ['replica', 'name', 'transport', 'sharing', 'ready', 'draining', 'restarts', 'queued', 'inflight', 'endpoints', 'instances'],
    properties: { replica: { ...str, description: 'the replica running these instances (each replica runs its own)' }, name: str, transport: str, sharing: str, ready: { type: 'boolean' }, draining: { type: 'boolean', description: 'a pool a reload or restart replaced or removed, finishing its calls beside the one in force; its processes stop once they end' }, restarts: int, queued: int, inflight: int, endpoints: strings, instances: { type: 'array', items: ref('Instance') } },
  },
  PinChange: {
    type: 'object',
    required: ['upstream', 'tool', 'approvedHash', 'pendingHash', 'summary', 'firstSeen', 'rejected', 'old', 'new', 'diff', 'findings'],
    properties: {
      upstream: str,
      tool: str,
      approvedHash: nullable('string'),
      pendingHash: str,
      summary: str,
      firstSeen: str,
      rejected: { type: 'boolean' },
      old: nullable('object'),
      new: nullable('object'),
      diff: strings,
      findings: {
        type: 'array',
        description: 'Hidden text in the pending definition: kind (tag, bidi, invisible, markup, image, pattern), field path, count; never the text',
        items: { type: 'object', required: ['kind', 'path', 'count'], properties: { kind: str, path: str, count: { type: 'integer' } } },
      },
    },
  },
  PinDecision: { type: 'object', required: ['tool', 'outcome'], properties: { tool: str, outcome: { enum: ['approved', 'rejected', 'not-pending', 'pinned-in-config'] } } },
  Tenant: {
    type: 'object',
    required: ['name', 'endpoints', 'limits', 'usage', 'byReplica'],
    properties: {
      name: str,
      endpoints: strings,
      limits: { type: 'object' },
      usage: { type: 'object', description: 'across every replica that answered', required: ['sessions', 'inflight'], properties: { sessions: int, inflight: int } },
      byReplica: {
        type: 'object',
        description: 'the same per replica id',
        additionalProperties: { type: 'object', required: ['sessions', 'inflight'], properties: { sessions: int, inflight: int } },
      },
    },
  },
  Link: {
    type: 'object',
    description: "A user's link to a user-oauth upstream: metadata only, never a token",
    required: ['issuer', 'subject', 'tenant', 'upstream', 'linkedAt', 'expiresAt', 'refreshable', 'state'],
    properties: {
      issuer: str,
      subject: str,
      tenant: str,
      upstream: str,
      linkedAt: str,
      expiresAt: str,
      refreshable: { type: 'boolean' },
      state: { type: 'string', enum: ['active', 'expired'], description: 'expired: no refresh token and the access token expired; its next use asks the user to consent again, and it is deleted 30 days after it expired' },
    },
  },
  Reload: {
    type: 'object',
    required: ['result', 'problems', 'warnings', 'restartRequired', 'sessionsEnded'],
    properties: {
      result: { enum: ['applied', 'unchanged', 'invalid', 'failed'] },
      problems: { ...strings, description: 'every problem of an invalid file, each with its path' },
      warnings: strings,
      restartRequired: { ...strings, description: 'settings that differ but need a restart; left as they were' },
      sessionsEnded: int,
      replicas: { type: 'object', description: 'with Redis: each replica reloads its own file; its report (or { error }) by replica id, this one included', additionalProperties: { type: 'object' } },
      unansweredReplicas: { ...int, description: 'replicas that took the request and did not answer in time' },
      replicasError: { ...str, description: 'with Redis unreachable: why the other replicas were not asked (this replica applied it; replicas holds its report alone)' },
      changes: {
        type: 'object',
        required: ['upstreams', 'endpoints', 'tenants', 'auth', 'admin'],
        properties: { upstreams: named, endpoints: named, tenants: named, auth: { type: 'boolean' }, admin: { type: 'boolean' } },
      },
    },
  },
};

const list = (item: string, description: string) => json({ type: 'object', required: ['items'], properties: { items: { type: 'array', items: ref(item) } } }, description);
/** A list answered a page at a time (see paging.ts): `?limit=` and `?cursor=`, and `nextCursor` while more remain. */
const paged = (item: string, description: string) =>
  json({ type: 'object', required: ['items'], properties: { items: { type: 'array', items: ref(item) }, nextCursor: { ...str, description: 'present when more remain: pass it as ?cursor= for the next page' } } }, `${description}, a page of them in a stable order (the same on every replica)`);
const pageParams = [
  { name: 'limit', in: 'query', required: false, description: 'items per page (default 100); anything but a whole number from 1 to 1000 is refused (400)', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
  { name: 'cursor', in: 'query', required: false, description: "the previous page's nextCursor, as it came (opaque; any replica takes it)", schema: str },
];
const pathParam = (name: string) => ({ name, in: 'path', required: true, schema: str });
const reviewed = {
  required: true,
  content: { 'application/json': { schema: { type: 'object', required: ['tools'], properties: { tools: { type: 'array', minItems: 1, items: { type: 'object', required: ['tool', 'hash'], properties: { tool: str, hash: str } } } } } } },
};

export const OPENAPI = {
  openapi: '3.1.0',
  info: { title: 'Switchboard admin API', version: '1', description: 'Operator control of one Switchboard replica; with Redis, sessions (list and end) span every replica. Every route needs the admin token or a JWT with the admin scope.' },
  components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas },
  security: [{ bearer: [] }],
  paths: {
    '/openapi.json': { get: { summary: 'This document', responses: { '200': json({ type: 'object' }, 'the OpenAPI document'), ...refusals } } },
    '/events': {
      get: {
        summary: 'Live updates for the console (Server-Sent Events): sessions, upstreams, tenants, pins when they change, audit lines as written',
        description:
          "Events: hello {replica, audit}; sessions, upstreams, tenants, pins (each {items}, the whole cluster's with Redis, sent on connect and when changed; sessions holds the first 200 by id, with limit and, while more are open, nextCursor for GET /sessions); audit {lines, dropped}, each line naming its replica (with Redis, the other replicas' lines are read once a second); denied {status, message} when the token stops being valid (checked every minute). Send the Authorization header (read it with fetch: EventSource cannot send one).",
        responses: { '200': { description: 'an event stream', content: { 'text/event-stream': { schema: str } } }, ...refusals },
      },
    },
    '/sessions': {
      get: {
        summary: "Open sessions (both protocol eras); with Redis, every replica's",
        description: "Every other replica is asked for its sessions (both eras, with what is in flight); sessions in the store whose holder did not answer (dead, or slow) come from their records, with inflight null. In id order, a page at a time. 503 when the store cannot be read.",
        parameters: pageParams,
        responses: { '200': paged('Session', 'sessions, with the replica holding each and whether it is alive'), '400': error, ...refusals },
      },
    },
    '/sessions/{id}': {
      delete: {
        summary: "End a session: here, or (Redis) on the replica holding it; a dead holder's record is removed",
        parameters: [pathParam('id')],
        responses: { '200': json(ref('EndedSession'), 'ended, and by which replica'), '404': error, '502': { ...error, description: 'replica_error: a 2026-07-28 standing no replica ended while one that may hold it answered with an error (named in the message; not known to be ended)' }, '504': { ...error, description: 'replica_timeout: the replica holding it (a 2026-07-28 standing: one that may hold it) took the request and did not answer in time (not known to be ended)' }, ...refusals },
      },
    },
    '/upstreams': { get: { summary: 'Upstreams and their instances, on every replica (with Redis)', responses: { '200': list('Upstream', 'upstream pools'), ...refusals } } },
    '/upstreams/{name}/restart': {
      post: { summary: 'Replace an upstream by a fresh pool (with Redis: on every replica, each report under replicas); the old one drains', parameters: [pathParam('name')], responses: { '200': json(ref('Reload'), 'what was replaced'), '404': error, ...refusals } },
    },
    '/pins': { get: { summary: 'Changed tool definitions awaiting approval', parameters: pageParams, responses: { '200': paged('PinChange', 'pending changes with both definitions and a diff, by upstream and tool'), '400': error, '404': error, ...refusals } } },
    '/pins/{upstream}/approve': {
      post: {
        summary: 'Approve pending definitions (each by the hash that was reviewed; a rejected one too)',
        parameters: [pathParam('upstream')],
        requestBody: reviewed,
        responses: { '200': list('PinDecision', 'per tool: approved, or why not'), '400': error, '404': error, ...refusals },
      },
    },
    '/pins/{upstream}/reject': {
      post: {
        summary: 'Reject pending definitions: they stay withheld and leave the queue until the upstream reports another one',
        parameters: [pathParam('upstream')],
        requestBody: reviewed,
        responses: { '200': list('PinDecision', 'per tool: rejected, or not-pending (changed meanwhile, or rejected already)'), '400': error, '404': error, ...refusals },
      },
    },
    '/tenants': { get: { summary: 'Tenants, their limits and current usage (across replicas with Redis)', responses: { '200': list('Tenant', 'tenants'), ...refusals } } },
    '/links': {
      get: {
        summary: "Users' links to user-oauth upstreams (which upstreams each user linked, until when): never a token",
        // Given empty, a filter is refused (400): never read as absent.
        parameters: [...['issuer', 'subject', 'tenant', 'upstream'].map((name) => ({ name, in: 'query', required: false, schema: { type: 'string', minLength: 1 } })), ...pageParams],
        responses: { '200': paged('Link', 'links, by upstream and user'), '400': error, '404': error, ...refusals },
      },
    },
    '/links/{upstream}': {
      delete: {
        summary: "Revoke a user's link: the sealed tokens are deleted; the user's next call asks for consent again",
        parameters: [pathParam('upstream'), ...['issuer', 'tenant', 'subject'].map((name) => ({ name, in: 'query', required: name === 'subject', schema: { type: 'string', minLength: 1 } }))],
        responses: { '200': list('Link', 'the links revoked'), '400': error, '404': error, ...refusals },
      },
    },
    '/config': { get: { summary: 'The config in force, secrets redacted', responses: { '200': json({ type: 'object' }, 'the effective config'), ...refusals } } },
    '/reload': { post: { summary: 'Read the config file again and apply it (with Redis: every replica its own file)', responses: { '200': json(ref('Reload'), 'applied, unchanged, or invalid with every problem'), ...refusals } } },
  },
} as const;
