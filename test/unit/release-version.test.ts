// One version for what a release publishes: the npm package, the image (its OCI version label, the tag the
// docs pull) and the Helm chart (appVersion, the image tag it defaults to, and its own version, released
// together). A bump that misses one of them fails here (README "Releasing").
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';

const read = (path: string) => readFileSync(path, 'utf8');
const VERSION = (JSON.parse(read('package.json')) as { version: string }).version;

describe('the release version', () => {
  it('package-lock.json agrees with package.json', () => {
    const lock = JSON.parse(read('package-lock.json')) as { version: string; packages: Record<string, { version?: string }> };
    assert.equal(lock.version, VERSION);
    assert.equal(lock.packages['']?.version, VERSION);
  });

  it("the Dockerfile's OCI labels carry it, with the licence of package.json and the chart's source", () => {
    const text = read('Dockerfile');
    const label = (name: string) => new RegExp(`org\\.opencontainers\\.image\\.${name}="([^"]*)"`).exec(text)?.[1];
    assert.equal(label('version'), VERSION);
    assert.equal(label('licenses'), (JSON.parse(read('package.json')) as { license: string }).license);
    const chart = parse(read('helm/switchboard/Chart.yaml')) as { sources: string[] };
    assert.equal(label('source'), chart.sources[0]);
  });

  it("the chart's version and appVersion are it, and the image tag defaults to appVersion", () => {
    const chart = parse(read('helm/switchboard/Chart.yaml')) as { version: string; appVersion: string };
    assert.equal(chart.appVersion, VERSION);
    assert.equal(chart.version, VERSION);
    const values = parse(read('helm/switchboard/values.yaml')) as { image: { tag: string } };
    assert.equal(values.image.tag, '', 'an empty tag: the template takes .Chart.AppVersion');
    assert.match(read('helm/switchboard/templates/_helpers.tpl'), /default \.Chart\.AppVersion \.Values\.image\.tag/);
  });

  it('every image reference with a version in the docs and manifests names this one', () => {
    const files = ['README.md', 'deploy/README.md', 'deploy/kubernetes/deployment.yaml', 'deploy/examples/sidecar/deployment.yaml'];
    // Image tags (switchboard:X.Y.Z) and the npm tarball's name (mcp-switchboard-X.Y.Z.tgz).
    const refs = files.flatMap((f) => [...read(f).matchAll(/\b(?:switchboard:|mcp-switchboard-)(\d+\.\d+\.\d+)\b/g)].map((m) => ({ at: `${f}: ${m[0]}`, version: m[1] })));
    assert.ok(refs.some((r) => r.at.includes('switchboard:')), 'the docs name a versioned image');
    assert.deepEqual(refs.filter((r) => r.version !== VERSION).map((r) => r.at), []);
  });
});
