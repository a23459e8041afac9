// A bubblewrap server given a writable path that holds the gateway's own files (found by a review): the
// config file (rewritten, the next reload or restart runs the server as `sandbox: none`), a key of
// auth.keys (replaced, the server signs tokens for any user), the pins file (it approves its own tools),
// a secret file. Refused at load, naming the path and the file; a readOnly path over a secret file is
// said as a warning (the server reads it). Real files on disk, read by the real loader.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { ConfigError, readConfigFile } from '../../../src/config/load.js';
import { sandboxGatewayFiles } from '../../../src/config/sandbox-gateway-files.js';

const dir = mkdtempSync(join(tmpdir(), 'swb-gateway-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function configWith(name: string, sandbox: string, extra = ''): string {
  const file = join(dir, name, 'config.yaml');
  mkdirSync(join(dir, name, 'data'), { recursive: true });
  writeFileSync(join(dir, name, 'admin-token'), 'a-token\n');
  writeFileSync(
    file,
    [
      extra,
      'upstreams:',
      '  - name: files',
      '    transport: stdio',
      '    command: /usr/bin/env',
      `    sandbox: ${sandbox}`,
      'endpoints:',
      '  - path: /mcp',
      '    upstreams: [files]',
    ].join('\n'),
  );
  return file;
}

function problems(file: string): string[] {
  try {
    readConfigFile(file, {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('a bubblewrap sandbox path over the gateway\'s own files', () => {
  it('refuses a writable path that holds the config file', () => {
    const found = problems(configWith('config', '{ writable: ["."] }'));
    assert.equal(found.length, 1, `refused: ${found.join('; ')}`);
    assert.match(found[0]!, /upstreams\[0\]\.sandbox\.writable\[0\].*config file .*config\.yaml/);
  });

  it('refuses a writable path that holds the pins file or admin.tokenFile', () => {
    const found = problems(configWith('pins', '{ writable: ["./data"] }', 'pinning: { file: ./data/pins.json }\nadmin: { tokenFile: ./data/../admin-token }'));
    assert.equal(found.length, 1, `refused: ${found.join('; ')}`);
    assert.match(found[0]!, /writable\[0\].*pinning\.file/);
  });

  it('allows a private writable tmpfs over them, and a writable path beside them', () => {
    assert.deepEqual(problems(configWith('tmpfs', '{ writable: ["."], writableSizeMb: 8 }')), []);
    assert.deepEqual(problems(configWith('beside', '{ writable: ["./data"] }', 'admin: { tokenFile: ./admin-token }')), []);
  });

  it('warns of a readOnly path that holds a secret file', () => {
    const { warnings } = readConfigFile(configWith('read', '{ readOnly: ["."] }', 'admin: { tokenFile: ./admin-token }'), {});
    assert.ok(warnings.some((w) => /readOnly\[0\].*admin\.tokenFile/.test(w)), warnings.join('\n'));
  });
});

// Every bubblewrap sandbox sees the system trees (/usr, /bin, /lib…) read-only, declared or not: a secret
// file of the gateway's there (a config in /usr/src/app, the node images' customary WORKDIR, or in
// /usr/local/etc) was read by every sandboxed server, unsaid (found by a review). Said now, as a readOnly
// path over it is. The trees are passed in here: a test cannot write to the host's /usr.
describe("the gateway's secret files inside a system tree every bubblewrap sandbox mounts", () => {
  const exposed = (name: string, sandbox: string, extra = '') => {
    const file = configWith(name, sandbox, extra);
    const { config } = readConfigFile(file, {});
    return sandboxGatewayFiles(config, file, [join(dir, name)]);
  };

  it('warns of the config file and a secret file there, naming the upstreams that see them', () => {
    const { warnings, problems } = exposed('usr', '{ readOnly: ["./data"] }', 'admin: { tokenFile: ./admin-token }');
    assert.deepEqual(problems, []);
    assert.ok(warnings.some((w) => /config file .*usr\/config\.yaml/.test(w) && /"files"/.test(w)), warnings.join('\n'));
    assert.ok(warnings.some((w) => /admin\.tokenFile .*admin-token/.test(w)), warnings.join('\n'));
  });

  it('says nothing for a server that is not in bubblewrap, nor of a file outside the trees', () => {
    assert.deepEqual(exposed('none', 'none').warnings, []);
    const file = configWith('outside', '{ readOnly: ["./data"] }');
    assert.deepEqual(sandboxGatewayFiles(readConfigFile(file, {}).config, file, [join(dir, 'outside', 'data')]).warnings, []);
  });
});

// The gateway's own program is one of its files too (found by a review): a writable path holding its
// package (a home folder shared whole with a gateway cloned in it), or inside its dist or node_modules,
// let the server rewrite the code the gateway runs, with every secret it holds, at its next start.
// A writable folder beside the code inside the package (the image's /app/data) is no such thing.
describe("a bubblewrap writable path over the gateway's own program", () => {
  const packageRoot = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');
  const refusedFor = (writable: string) => problems(configWith(`program-${writable.length}`, `{ writable: [${JSON.stringify(writable)}] }`));

  it('refuses one that holds its package, or lies in its dist or node_modules', () => {
    for (const w of [dirname(packageRoot), packageRoot, join(packageRoot, 'node_modules', 'fastify'), join(packageRoot, 'dist')]) {
      const found = refusedFor(w);
      assert.equal(found.length, 1, `${w}: ${found.join('; ')}`);
      assert.match(found[0]!, /writable\[0\].*the gateway's own program/);
    }
  });

  it('allows a writable folder beside its code', () => {
    assert.deepEqual(refusedFor(join(packageRoot, 'data')), []);
  });
});
