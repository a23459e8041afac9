/**
 * The tool-search fixture is measurement data: if it drifts (a query naming a tool that a re-collection
 * dropped, a duplicate query weighing twice, a server silently missing) every figure the bench reports
 * is wrong without anything failing. These checks keep it honest.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splitPrefixed } from '../../../src/router/names.js';
import { aggregatedTools, expectedNames, loadCorpus, loadQueries, toolsListResult } from '../../bench/tools/corpus.js';

const corpus = loadCorpus();
const queries = loadQueries();
const tools = aggregatedTools(corpus);
const normalize = (q: string): string => q.toLowerCase().replace(/\s+/g, ' ').trim();

describe('tool corpus fixture', () => {
  it('holds at least 8 servers and 150 tools', () => {
    assert.ok(corpus.servers.length >= 8, `${corpus.servers.length} servers`);
    assert.ok(tools.length >= 150, `${tools.length} tools`);
  });

  it('records, per server, the npm package and the exact version it was collected from', () => {
    for (const s of corpus.servers) {
      assert.match(s.package, /^(@[a-z0-9-]+\/)?[a-z0-9.-]+$/, s.name);
      assert.match(s.version, /^\d+\.\d+\.\d+(-[\w.-]+)?$/, `${s.name} version ${s.version}`);
      assert.ok(s.tools.length > 0, `${s.name} has no tools`);
    }
    assert.match(corpus.collectedAt, /^\d{4}-\d{2}-\d{2}T/);
  });

  it('uses server names that survive the gateway prefix, and gives every tool a unique aggregated name', () => {
    const names = new Set<string>();
    for (const t of tools) {
      assert.deepEqual(splitPrefixed(t.name), { upstream: t.server, name: t.tool });
      assert.ok(!names.has(t.name), `duplicate ${t.name}`);
      names.add(t.name);
    }
  });

  it('keeps each definition as listed: a name and an input schema object', () => {
    for (const s of corpus.servers) {
      for (const t of s.tools) {
        assert.equal(typeof t.name, 'string');
        assert.ok(t.inputSchema !== null && typeof t.inputSchema === 'object', `${s.name}/${t.name} inputSchema`);
      }
    }
  });

  it('lists the aggregated catalogue as an all-mode tools/list would', () => {
    const result = toolsListResult(corpus);
    assert.equal(result.tools.length, tools.length);
    assert.equal(result.tools[0]?.name, tools[0]?.name);
  });
});

describe('task queries fixture', () => {
  it('holds at least 150 queries with unique ids', () => {
    assert.ok(queries.length >= 150, `${queries.length} queries`);
    assert.equal(new Set(queries.map((q) => q.id)).size, queries.length);
  });

  it('has no query twice (ignoring case and spacing)', () => {
    const seen = new Map<string, string>();
    for (const q of queries) {
      const key = normalize(q.query);
      assert.ok(!seen.has(key), `${q.id} repeats ${seen.get(key)}: ${q.query}`);
      seen.set(key, q.id);
    }
  });

  it('expects only tools that exist in the corpus, each at most once per query', () => {
    const known = new Set(tools.map((t) => t.name));
    for (const q of queries) {
      assert.ok(q.expected.length > 0, `${q.id} expects nothing`);
      const names = expectedNames(q);
      assert.equal(new Set(names).size, names.length, `${q.id} lists a tool twice`);
      for (const n of names) assert.ok(known.has(n), `${q.id} expects ${n}, which is not in the corpus`);
    }
  });

  it('covers every server in the corpus, and several queries accept tools from more than one server', () => {
    const expectedServers = new Set(queries.flatMap((q) => q.expected.map((e) => e.server)));
    for (const s of corpus.servers) assert.ok(expectedServers.has(s.name), `no query for ${s.name}`);
    const crossServer = queries.filter((q) => new Set(q.expected.map((e) => e.server)).size > 1);
    assert.ok(crossServer.length >= 20, `${crossServer.length} cross-server queries`);
  });
});
