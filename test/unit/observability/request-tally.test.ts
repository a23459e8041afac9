// The request metrics counted in a RequestTally must scrape exactly as prom-client's own Counter and
// Histogram did for the same requests: the same requests go to both, and the two /metrics texts are compared.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Histogram, Registry, type OpenMetricsContentType } from 'prom-client';
import { Metrics } from '../../../src/observability/metrics.js';
import type { AnsweredRequest } from '../../../src/observability/request-tally.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The metrics as they were: prom-client's, updated per request. */
function promClientMetrics() {
  const registry = new Registry();
  const requests = new Counter({ name: 'switchboard_requests_total', help: 'Client requests answered', labelNames: ['method', 'endpoint', 'upstream', 'outcome', 'protocol_era'], registers: [registry] });
  const duration = new Histogram({ name: 'switchboard_request_duration_seconds', help: 'Time to answer a client request', labelNames: ['method', 'endpoint', 'upstream', 'outcome', 'protocol_era'], buckets: BUCKETS, registers: [registry] });
  const tools = new Counter({ name: 'switchboard_tool_calls_total', help: 'tools/call by tool and outcome', labelNames: ['tool', 'outcome'], registers: [registry] });
  return {
    registry,
    done(r: AnsweredRequest) {
      const labels = { method: r.method, endpoint: r.endpoint, upstream: r.upstream, outcome: r.outcome, protocol_era: r.era };
      requests.inc(labels);
      duration.observe(labels, r.seconds);
      if (r.tool !== undefined) tools.inc({ tool: r.tool, outcome: r.outcome });
    },
  };
}

/** The lines of the three request metrics in a scrape, in order. */
const requestLines = (text: string) => text.split('\n').filter((l) => /switchboard_(requests_total|request_duration_seconds|tool_calls_total)/.test(l));

/** A deterministic mix of requests: methods, endpoints, eras, outcomes, tools, durations across every bucket and above. */
function* requests(n: number): Generator<AnsweredRequest> {
  const methods = ['tools/call', 'tools/list', 'resources/read', 'initialize'];
  const outcomes = ['ok', 'error', 'denied'];
  for (let i = 0; i < n; i++) {
    const method = methods[i % methods.length]!;
    const seconds = [0.0004, 0.001, 0.0031, 0.02, 0.3, 1, 7, 45, 120, 0.0999][i % 10]! * (1 + (i % 3) / 10);
    yield { method, endpoint: i % 5 === 0 ? '/other' : '/mcp', upstream: i % 4 === 0 ? 'none' : 'up"stream\\x', outcome: outcomes[i % 3]!, seconds, tool: method === 'tools/call' ? `up__t${i % 6}` : undefined, era: i % 2 === 0 ? 'legacy' : 'modern' };
  }
}

describe('request metrics counted in a tally', () => {
  it('scrape line for line as prom-client counted them, across scrapes', async () => {
    const ours = new Metrics(false, false);
    const theirs = promClientMetrics();
    const all = [...requests(997)];
    for (const [from, to] of [[0, 1], [1, 400], [400, 997]] as const) {
      for (const r of all.slice(from, to)) {
        ours.tally.done(r);
        theirs.done(r);
      }
      const got = requestLines((await ours.render()).body);
      assert.deepEqual(got, requestLines(await theirs.registry.metrics()));
      assert.ok(got.length > 3);
    }
  });

  it('the JSON view of the histogram carries each label set in its labels, as prom-client gives it', async () => {
    const ours = new Metrics(false, false);
    const theirs = promClientMetrics();
    for (const r of requests(50)) {
      ours.tally.done(r);
      theirs.done(r);
    }
    const pick = async (registry: Registry) => (await registry.getMetricsAsJSON()).filter((m) => m.name.startsWith('switchboard_request'));
    assert.deepEqual(await pick(ours.registry), await pick(theirs.registry));
  });

  it("the registry's resetMetrics starts the three over", async () => {
    const ours = new Metrics(false, false);
    for (const r of requests(20)) ours.tally.done(r);
    assert.match((await ours.render()).body, /^switchboard_requests_total\{/m);
    ours.registry.resetMetrics();
    assert.doesNotMatch((await ours.render()).body, /^switchboard_(requests_total|request_duration_seconds|tool_calls_total)/m);
    ours.tally.done({ method: 'tools/list', endpoint: '/mcp', upstream: 'none', outcome: 'ok', seconds: 0.01, tool: undefined, era: 'legacy' });
    assert.match((await ours.render()).body, /^switchboard_request_duration_seconds_count\{method="tools\/list".*\} 1$/m);
  });

  it('runs of one label set, and that set again after a reset, count as prom-client counted them', async () => {
    const ours = new Metrics(false, false);
    const theirs = promClientMetrics();
    const both = (r: AnsweredRequest) => (ours.tally.done(r), theirs.done(r));
    const all = [...requests(60)];
    all.forEach((r, i) => {
      for (let k = 0; k <= i % 4; k++) both(r);
    });
    assert.deepEqual(requestLines((await ours.render()).body), requestLines(await theirs.registry.metrics()));
    // The set counted last, counted again after a reset: into a cell the scrape shows.
    ours.registry.resetMetrics();
    theirs.registry.resetMetrics();
    both(all.at(-1)!);
    both(all.at(-1)!);
    const got = requestLines((await ours.render()).body);
    assert.deepEqual(got, requestLines(await theirs.registry.metrics()));
    assert.ok(got.some((l) => l.startsWith('switchboard_requests_total{') && l.endsWith(' 2')), got.join('\n'));
  });

  it('a duration that is not a number counts the request but is not observed (no histogram series, as prom-client)', async () => {
    const ours = new Metrics(false, false);
    ours.tally.done({ method: 'tools/call', endpoint: '/mcp', upstream: 'up', outcome: 'ok', seconds: Number.NaN, tool: 'up__t', era: 'legacy' });
    const body = (await ours.render()).body;
    assert.match(body, /^switchboard_requests_total\{method="tools\/call".*\} 1$/m);
    assert.doesNotMatch(body, /^switchboard_request_duration_seconds/m);
    assert.match(body, /^switchboard_tool_calls_total\{tool="up__t",outcome="ok"\} 1$/m);
  });

  it('with exemplars, an OpenMetrics scrape shows each bucket\'s last traced observation line for line as prom-client kept it', async () => {
    const ours = new Metrics(false, true);
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const theirs = new Histogram({ name: 'switchboard_request_duration_seconds', help: 'Time to answer a client request', labelNames: ['method', 'endpoint', 'upstream', 'outcome', 'protocol_era'], buckets: BUCKETS, registers: [registry], enableExemplars: true });
    const all = [...requests(997)];
    for (const [from, to] of [[0, 1], [1, 400], [400, 997]] as const) {
      all.slice(from, to).forEach((r, k) => {
        // Every third request outside a sampled span (no ids): it is counted, and leaves the exemplar as it was.
        const i = from + k;
        const ids = i % 3 === 2 ? undefined : { trace_id: i.toString(16).padStart(32, '0'), span_id: (i * 7).toString(16).padStart(16, '0') };
        ours.tally.done(r, ids);
        const labels = { method: r.method, endpoint: r.endpoint, upstream: r.upstream, outcome: r.outcome, protocol_era: r.era };
        theirs.observe({ labels, value: r.seconds, exemplarLabels: (ids ?? {}) as Record<never, string> });
      });
      // The time stamps are each side's own clock: compared apart, within the time the loop took.
      const stamps: number[] = [];
      const strip = (text: string) =>
        text
          .split('\n')
          .filter((l) => l.startsWith('switchboard_request_duration_seconds'))
          .map((l) => l.replace(/ (\d+(\.\d+)?)$/, (_m, t: string) => (l.includes(' # {') ? (stamps.push(Number(t)), ' T') : ` ${t}`)));
      const got = strip((await ours.render('application/openmetrics-text; version=1.0.0')).body);
      const want = strip(await registry.metrics());
      assert.deepEqual(got, want);
      if (to === 997) assert.ok(got.filter((l) => l.includes(' # {trace_id=')).length > 20);
      assert.ok(Math.max(...stamps) - Math.min(...stamps) < 60, 'time stamps in seconds, from the same minute');
    }
    // The Prometheus format has no exemplars.
    assert.doesNotMatch((await ours.render()).body, /# \{trace_id=/);
  });

  it('with exemplars the counters still come from the tally, and an OpenMetrics scrape leaves the counters\' names alone', async () => {
    const ours = new Metrics(false, true);
    ours.tally.done({ method: 'tools/call', endpoint: '/mcp', upstream: 'up', outcome: 'ok', seconds: 0.002, tool: 'up__t', era: 'legacy' }, { trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16) });
    const open = (await ours.render('application/openmetrics-text; version=1.0.0')).body;
    assert.match(open, /^switchboard_requests_total\{method="tools\/call",endpoint="\/mcp",upstream="up",outcome="ok",protocol_era="legacy"\} 1$/m);
    assert.match(open, /switchboard_request_duration_seconds_bucket\{le="0.0025",method="tools\/call".*\} 1 # \{trace_id="a{32}",span_id="b{16}"\} 0.002 \d+/);
    assert.match((await ours.render()).body, /^switchboard_tool_calls_total\{tool="up__t",outcome="ok"\} 1$/m);
    // Scrapes asked for at once, in both formats: each has its own names.
    const both = await Promise.all([ours.render('application/openmetrics-text'), ours.render(), ours.render('application/openmetrics-text'), ours.render()]);
    assert.match(both[0]!.body, /^# TYPE switchboard_tool_calls counter$/m);
    assert.match(both[1]!.body, /^# TYPE switchboard_tool_calls_total counter$/m);
    assert.match(both[2]!.body, /^# TYPE switchboard_tool_calls counter$/m);
    assert.match(both[3]!.body, /^# TYPE switchboard_tool_calls_total counter$/m);
  });
});
