// The built image, run the way the Helm chart runs it (test/image/podman.ts: uid 10001, read-only root,
// tmpfs /tmp, no capabilities, no-new-privileges), with its built-in config (deploy/examples/image-default.yaml:
// JWT against JWT_ISSUER / JWT_JWKS_URL, the demo echo upstream in the `limits` sandbox). The key set is
// served from this process and fetched by the container over its bridge; calls go through the published
// port with the official SDK client. Started by `npm run image:test` (test/image/run.ts), which sets SWB_IMAGE.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IMAGE, podman, startContainer, waitFor200, type Container } from './podman.js';
import { textOf } from '../helpers/sdk.js';
import { connectWithToken, JwksServer, makeKey, signToken, type TestKey, type TokenClient } from '../helpers/tokens.js';

const ISSUER = 'https://idp.image.test';
// The default of SWITCHBOARD_PUBLIC_URL in the built-in config: the audience tokens must carry.
const AUDIENCE = 'http://localhost:8080';
const GRACE_SECONDS = 30; // the Dockerfile: "give it at least 30 s to stop"; the chart gives 35 less a 3 s preStop

/** A fact about the running gateway process (pid found by its command line), read inside the container. */
async function gatewayStatus(c: Container): Promise<string> {
  const r = await c.exec(['sh', '-c', 'for p in /proc/[0-9]*; do if grep -q "dist/main.js" $p/cmdline 2>/dev/null && ! grep -q tini $p/cmdline; then cat $p/status; exit 0; fi; done; exit 1']);
  assert.equal(r.code, 0, `no gateway process found: ${r.out}`);
  return r.stdout;
}

describe(`the image ${IMAGE}, hardened as in the chart, with its built-in config`, { skip: !IMAGE && 'SWB_IMAGE is not set (run npm run image:test)' }, () => {
  let c: Container;
  let jwks: JwksServer;
  let key: TestKey;
  let client: TokenClient | undefined;
  const gw = { url: (path = '/mcp') => new URL(path, c.url(8080)) };

  before(async () => {
    key = await makeKey('image-key', 'ES256');
    // All interfaces: the container reaches this host at host.containers.internal, over podman's bridge.
    // Only a public key is served.
    jwks = await JwksServer.start([key.publicJwk], '0.0.0.0');
    const port = new URL(jwks.url).port;
    c = await startContainer({ env: { JWT_ISSUER: ISSUER, JWT_JWKS_URL: `http://host.containers.internal:${port}/jwks.json` } });
    await waitFor200(c, `${c.url(8080)}/readyz`);
  });

  after(async () => {
    await client?.close().catch(() => {});
    await c?.remove();
    await jwks?.close();
  });

  it('answers its liveness and readiness probes, and its own HEALTHCHECK passes', async () => {
    assert.equal((await fetch(`${c.url(8080)}/healthz`)).status, 200);
    assert.equal((await fetch(`${c.url(8080)}/readyz`)).status, 200);
    const hc = await podman(['healthcheck', 'run', c.name]);
    assert.equal(hc.code, 0, `podman healthcheck run: ${hc.out}`);
  });

  it('runs the gateway as uid 10001 with no capabilities, no_new_privs, on a read-only root', async () => {
    const status = await gatewayStatus(c);
    assert.match(status, /^Uid:\s+10001\s+10001\s+10001\s+10001$/m);
    assert.match(status, /^Gid:\s+10001\s+10001\s+10001\s+10001$/m);
    assert.match(status, /^CapEff:\s+0+$/m);
    assert.match(status, /^CapBnd:\s+0+$/m);
    assert.match(status, /^NoNewPrivs:\s+1$/m);
    const write = await c.exec(['sh', '-c', 'touch /app/owned 2>&1; touch /tmp/ok && echo tmp-writable']);
    assert.match(write.out, /Read-only file system/);
    assert.match(write.out, /tmp-writable/);
  });

  it('refuses a call without a token, and serves a tool call with a JWT through the published port', async () => {
    const bare = await fetch(gw.url(), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    assert.equal(bare.status, 401);
    const token = await signToken(key, { iss: ISSUER, aud: AUDIENCE, tenant: 'default', sub: 'image-test' });
    client = await connectWithToken(gw, 'streamable-http', token);
    const tools = (await client.client.listTools()).tools.map((t) => t.name);
    const echo = tools.find((t) => t.endsWith('echo'));
    assert.ok(echo, `an echo tool in ${tools.join(', ')}`);
    const r = await client.client.callTool({ name: echo, arguments: { message: 'through the container' } });
    assert.equal(textOf(r), 'through the container');
    assert.ok(jwks.fetches > 0, 'the container fetched the key set');
  });

  it('serves Prometheus metrics on 9464, counting that call', async () => {
    const res = await fetch(`${c.url(9464)}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /^switchboard_tool_calls_total\{[^}]*tool="[^"]*echo"[^}]*\} [1-9]/m);
    assert.match(text, /^switchboard_upstream_instances\{[^}]*upstream="echo"[^}]*state="ready"[^}]*\} 1$/m);
  });

  it('stops on SIGTERM with exit code 0 within the grace period, a session still open', async () => {
    // podman stop sends the image's STOPSIGNAL, then SIGKILL (exit 137) if the grace runs out.
    assert.ok(client, 'a session is open');
    const code = await c.stop(GRACE_SECONDS);
    const logs = await c.logs();
    assert.equal(code, 0, `exit code ${code}; log:\n${logs.slice(-3000)}`);
    assert.match(logs, /shutting down: draining requests in flight/);
  });
});
