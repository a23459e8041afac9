import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig, readConfigFile } from '../../../src/config/load.js';

const dir = mkdtempSync(join(tmpdir(), 'swb-foreign-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** The problems loadConfig reports for a file (it must refuse it). */
function refused(path: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    loadConfig(path, env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
  assert.fail(`${path} was accepted`);
}

describe('a file that is not a gateway config says so, in one problem', () => {
  it('a Docker Compose file, even with LOG_LEVEL set (an override must not make it look like a config)', () => {
    const compose = file('compose.yaml', 'services:\n  switchboard:\n    image: switchboard\nvolumes:\n  data: {}\n');
    for (const env of [{}, { LOG_LEVEL: 'debug', SWITCHBOARD_PORT: '1' }]) {
      const p = refused(compose, env);
      assert.equal(p.length, 1, JSON.stringify(p));
      assert.match(p[0]!, /^this is a Docker Compose file \(it has "services"\), not a Switchboard gateway config/);
    }
  });

  it('a Kubernetes manifest, one document or several; a ConfigMap that embeds a config says where', () => {
    const one = refused(file('deploy.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: x }\nspec: {}\n'));
    assert.deepEqual(one, ['this file is a Kubernetes manifest (kind: Deployment), not a Switchboard gateway config']);
    const several = refused(
      file('all.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\ndata:\n  gateway.yaml: |\n    upstreams: []\n    token: ${NOT_SET}\n---\napiVersion: v1\nkind: Service\nmetadata: { name: x }\n'),
    );
    // Recognised before ${…} interpolation: the embedded config's variables are not this file's problem.
    assert.deepEqual(several, ['this file holds Kubernetes manifests (kinds: ConfigMap, Service), not a Switchboard gateway config; the text of data["gateway.yaml"] is one: put that in a file of its own']);
  });

  it('Helm values with the config under a key, and a file with none of the gateway sections', () => {
    const helm = refused(file('values.yaml', 'replicaCount: 2\nimage: { tag: x }\nmetrics: { enabled: true }\nconfig:\n  upstreams: []\n  endpoints: []\n'));
    assert.equal(helm.length, 1);
    assert.match(helm[0]!, /^this is not a Switchboard gateway config: it has no upstreams or endpoints, and its top-level keys \(replicaCount, image, config\) are not gateway sections .*; its "config" section is one/);
    assert.equal(refused(file('other.yaml', 'name: x\nversion: 3\n')).length, 1);
  });

  it('several YAML documents are refused even when each could be a config', () => {
    const p = refused(file('two.yaml', 'upstreams: []\n---\nendpoints: []\n'));
    assert.deepEqual(p, ['the file holds 2 YAML documents; a gateway config is one mapping with upstreams and endpoints']);
  });

  it('a document marker before or after the config (an empty document: nothing but "---" and comments) is no second document', () => {
    const config = 'upstreams: [{ name: a, transport: stdio, command: node }]\nendpoints: [{ path: /mcp, upstreams: [a] }]\n';
    for (const text of [`---\n${config}`, `${config}---\n`, `# gateway\n---\n${config}---\n# end of file\n`]) {
      assert.equal(loadConfig(file('marked.yaml', text), {}).upstreams[0]!.name, 'a', JSON.stringify(text));
    }
    // A second document with content is still refused.
    assert.deepEqual(refused(file('null-doc.yaml', `${config}---\n~\n`)), ['the file holds 2 YAML documents; a gateway config is one mapping with upstreams and endpoints']);
  });

  it('a config with mistakes is still reported as a config, each mistake by its path', () => {
    const p = refused(file('typos.yaml', 'sever: {}\nupstreams: [{ name: a, transport: stdio, command: node }]\nendpoints: [{ path: /mcp, upstreams: [a] }]\n'));
    assert.deepEqual(p, ['sever: unknown key; did you mean "server"?']);
  });
});

describe('warnings: valid, but will not work as meant', () => {
  const jwt = (auth: string, server = 'server: { publicUrl: "https://mcp.example" }\n') => `${server}auth: ${auth}\ntenants: [{ name: t, endpoints: ["*"] }]\nupstreams: [{ name: a, transport: stdio, command: node }]\nendpoints: [{ path: /mcp, upstreams: [a] }]\n`;

  it('a non-URL issuer, since the RFC 9728 metadata offers it to OAuth clients as the authorization server', () => {
    const { warnings } = readConfigFile(file('iss.yaml', jwt('{ mode: jwt, issuer: switchboard-dev, hmacSecret: "0123456789abcdef0123456789abcdef", allowHmac: true }')), {});
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^auth\.issuer: "switchboard-dev" is not a URL, so it cannot be the authorization server of the protected resource metadata \(RFC 9728\), .*mcp-remote.*; use the issuer's URL .*or set auth\.authorizationServers$/);
    const url = readConfigFile(file('iss-url.yaml', jwt('{ mode: jwt, issuer: "https://idp.example", hmacSecret: "0123456789abcdef0123456789abcdef", allowHmac: true }')), {});
    assert.deepEqual(url.warnings, []);
    const servers = readConfigFile(file('iss-as.yaml', jwt('{ mode: jwt, issuer: dev, authorizationServers: ["https://idp.example", "idp"], hmacSecret: "0123456789abcdef0123456789abcdef", allowHmac: true }')), {});
    assert.deepEqual(servers.warnings, ["auth.authorizationServers[1]: \"idp\" is not an http(s) URL without query or fragment; it is left out of the metadata, and OAuth clients cannot discover an authorization server there"]);
  });

  it('jwt without server.publicUrl: the metadata would name any Host, the default audience a bind address', () => {
    const { warnings } = readConfigFile(file('no-public.yaml', jwt('{ mode: jwt, issuer: "https://idp.example", hmacSecret: "0123456789abcdef0123456789abcdef", allowHmac: true }', '')), {});
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /^server\.publicUrl: not set, so the protected resource metadata .* names whatever Host a request carries, and tokens must carry the audience http:\/\/.*; set server\.publicUrl/);
    const audience = readConfigFile(file('no-public-aud.yaml', jwt('{ mode: jwt, issuer: "https://idp.example", audience: ["api://mcp"], hmacSecret: "0123456789abcdef0123456789abcdef", allowHmac: true }', '')), {});
    assert.ok(!audience.warnings[0]!.includes('audience'), 'an audience of its own: only the metadata is said');
  });

  it("an upstream's auth.clientSecretFile that does not exist: a warning, as for a missing program", () => {
    const auth = '{ type: token-exchange, tokenEndpoint: "https://idp.example/token", clientId: c, clientSecretFile: ./secrets/exchange, audience: "https://mcp.example" }';
    const cfg = file('secret-file.yaml', `upstreams:\n  - { name: a, transport: streamable-http, url: "https://mcp.example/mcp", sharing: per-user, auth: ${auth} }\nendpoints: [{ path: /mcp, upstreams: [a] }]\n`);
    const { warnings } = readConfigFile(cfg, {});
    assert.ok(
      warnings.includes(`upstreams[0].auth.clientSecretFile: ${join(dir, 'secrets', 'exchange')} ("./secrets/exchange", relative to the config file's directory) does not exist; this upstream cannot get a token`),
      warnings.join('\n'),
    );
  });

  it('a program or path argument that does not exist, named as written and as resolved', () => {
    const cfg = file('paths.yaml', 'upstreams:\n  - { name: a, transport: stdio, sandbox: none, command: ./bin/server, args: [./server.js, stdio, dist/x.js] }\nendpoints: [{ path: /mcp, upstreams: [a] }]\n');
    const { warnings } = readConfigFile(cfg, {});
    assert.deepEqual(warnings, [
      `upstreams[0].command: ${join(dir, 'bin', 'server')} ("./bin/server", relative to the config file's directory) does not exist; this upstream cannot start`,
      `upstreams[0].args[0]: ${join(dir, 'server.js')} ("./server.js", relative to the config file's directory) does not exist; this upstream cannot start`,
    ]);
    writeFileSync(join(dir, 'server.js'), '');
    assert.equal(readConfigFile(cfg, {}).warnings.length, 1, 'only the command is missing now');
  });

  it('a bare command that is not on PATH (a typo): a warning, as for a missing path; one that is, none', () => {
    // The gateway looks a bare name up on its own PATH at each start (src/sandbox/launch-plan.ts): not there, the upstream never starts.
    const config = (command: string) => file(`bare-${command}.yaml`, `upstreams:\n  - { name: a, transport: stdio, sandbox: none, command: ${command} }\nendpoints: [{ path: /mcp, upstreams: [a] }]\n`);
    assert.deepEqual(readConfigFile(config('nodee-not-installed'), {}).warnings, ['upstreams[0].command: "nodee-not-installed" is not on the gateway\'s PATH; this upstream cannot start (install it, or write its path)']);
    assert.deepEqual(readConfigFile(config('node'), {}).warnings, []);
  });
});
