// deploy/docker-compose.yaml and what it mounts, checked without Docker: the file against the Compose
// Specification's JSON schema (test/chart/tools.mjs fetches it from npm), Prometheus's config and alert rules
// with promtool (Debian's `prometheus` package) where installed. Bringing the stack up is not possible where
// these tests run: no registry serves its redis, prom/prometheus and grafana/grafana images, and Grafana is
// packaged neither by Debian nor on npm (deploy/README.md). Started by
// `npm run compose:test` (test/compose/run.ts), which sets SWB_COMPOSE_SCHEMA.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { runToExit } from '../helpers/processes.js';

const SCHEMA = process.env.SWB_COMPOSE_SCHEMA ?? '';
const COMPOSE = 'deploy/docker-compose.yaml';
const hasPromtool = spawnSync('sh', ['-c', 'command -v promtool']).status === 0;
const tmp = mkdtempSync(join(tmpdir(), 'swb-compose-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function validator(): ValidateFunction {
  // strict: false, the schema uses keywords of later drafts (deprecated) that draft-07 does not define.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  // Its $schema names draft-07 by an https URL, which ajv does not know by that name; draft-07 is ajv's default.
  const { $schema: _draft, ...schema } = JSON.parse(readFileSync(SCHEMA, 'utf8')) as Record<string, unknown>;
  return ajv.compile(schema);
}
const problems = (v: ValidateFunction, doc: unknown) => (v(doc) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`));

describe('the compose file against the Compose Specification', { skip: !SCHEMA && 'SWB_COMPOSE_SCHEMA is not set (run npm run compose:test)' }, () => {
  it(`${COMPOSE} validates`, () => {
    assert.deepEqual(problems(validator(), parse(readFileSync(COMPOSE, 'utf8'))), []);
  });

  it('a misspelt key or a wrong type is refused (the check can fail)', () => {
    const v = validator();
    const typo = parse(readFileSync(COMPOSE, 'utf8'));
    typo.services.gateway.restrat = 'always';
    assert.match(problems(v, typo).join('\n'), /\/services\/gateway must NOT have additional properties \{"additionalProperty":"restrat"\}/);
    const wrong = parse(readFileSync(COMPOSE, 'utf8'));
    wrong.services.gateway.read_only = ['yes'];
    assert.match(problems(v, wrong).join('\n'), /\/services\/gateway\/read_only must be/);
  });
});

describe('Prometheus config and alert rules, with promtool', { skip: !hasPromtool && 'promtool is not installed (apt-get install prometheus)' }, () => {
  it('deploy/prometheus/alerts.yml passes promtool check rules', async () => {
    const r = await runToExit('promtool', ['check', 'rules', 'deploy/prometheus/alerts.yml']);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /SUCCESS: \d+ rules found/);
  });

  it('SwitchboardUpstreamNoReadyInstance fires for an upstream failing to come up, not for an idle per-session one (promtool test rules)', async () => {
    // "scratch": per-session (or per-user, per-tenant) with no session now: no instance at all, every state 0, as
    // the gateway reports it (and /readyz counts it ready). "tickets": shared, crashing: its one instance in backoff.
    const states = (upstream: string, counts: Record<string, number>) =>
      ['starting', 'ready', 'backoff', 'stopped'].map((state) => ({ series: `switchboard_upstream_instances{job="switchboard",upstream="${upstream}",state="${state}"}`, values: `${counts[state] ?? 0}x20` }));
    const tests = {
      rule_files: [resolve('deploy/prometheus/alerts.yml')],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [...states('scratch', {}), ...states('tickets', { backoff: 1 }), ...states('echo', { ready: 2 })],
          alert_rule_test: [
            {
              eval_time: '15m',
              alertname: 'SwitchboardUpstreamNoReadyInstance',
              exp_alerts: [{ exp_labels: { severity: 'critical', upstream: 'tickets' }, exp_annotations: { summary: 'Upstream tickets has no ready instance' } }],
            },
          ],
        },
      ],
    };
    const file = join(tmp, 'alerts.test.yml');
    writeFileSync(file, JSON.stringify(tests));
    const r = await runToExit('promtool', ['test', 'rules', file]);
    assert.equal(r.code, 0, r.out);
  });

  it('SwitchboardDown fires for a gateway whatever the release is called, not for another job (promtool test rules)', async () => {
    // Compose's scrape job is "switchboard"; the chart's ServiceMonitor names the job after the Service
    // (<release>-switchboard) and adds app_kubernetes_io_part_of from the Service's labels (targetLabels).
    const down = (labels: string) => ({ series: `up{${labels}}`, values: '0x10' });
    const tests = {
      rule_files: [resolve('deploy/prometheus/alerts.yml')],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            down('job="switchboard",instance="gateway:9464"'),
            down('job="mcp-prod-switchboard",namespace="mcp",instance="10.0.0.5:9464",app_kubernetes_io_part_of="switchboard"'),
            down('job="other",instance="10.0.0.9:9100"'),
          ],
          alert_rule_test: [
            {
              eval_time: '5m',
              alertname: 'SwitchboardDown',
              exp_alerts: [
                { exp_labels: { severity: 'critical', job: 'switchboard', instance: 'gateway:9464' }, exp_annotations: { summary: 'Switchboard gateway:9464 is not being scraped' } },
                {
                  exp_labels: { severity: 'critical', job: 'mcp-prod-switchboard', namespace: 'mcp', instance: '10.0.0.5:9464', app_kubernetes_io_part_of: 'switchboard' },
                  exp_annotations: { summary: 'Switchboard 10.0.0.5:9464 is not being scraped' },
                },
              ],
            },
          ],
        },
      ],
    };
    const file = join(tmp, 'alerts-down.test.yml');
    writeFileSync(file, JSON.stringify(tests));
    const r = await runToExit('promtool', ['test', 'rules', file]);
    assert.equal(r.code, 0, r.out);
  });

  it('SwitchboardAbsent fires once no gateway target is left at all, not while one is scraped (promtool test rules)', async () => {
    // SwitchboardDown needs an `up` series at 0: a Deployment scaled to 0, pods that cannot be scheduled (no IP,
    // so no endpoint) or a deleted release leave no target, no `up`, and nothing fired while every gateway was gone.
    const alert = (name: string, input: Array<{ series: string; values: string }>, at: string, exp: object[]) => ({
      interval: '1m',
      input_series: input,
      alert_rule_test: [{ eval_time: at, alertname: name, exp_alerts: exp }],
    });
    const k8s = 'up{job="mcp-prod-switchboard",instance="10.0.0.5:9464",app_kubernetes_io_part_of="switchboard"}';
    const other = { series: 'up{job="other",instance="10.0.0.9:9100"}', values: '1x40' };
    const fired = [{ exp_labels: { severity: 'critical', job: 'switchboard' }, exp_annotations: { summary: 'No Switchboard gateway is being scraped' } }];
    const tests = {
      rule_files: [resolve('deploy/prometheus/alerts.yml')],
      evaluation_interval: '1m',
      tests: [
        alert('SwitchboardAbsent', [other, { series: k8s, values: '1x4 _x36' }], '3m', []),
        alert('SwitchboardAbsent', [other, { series: k8s, values: '1x4 _x36' }], '25m', fired),
        alert('SwitchboardAbsent', [other, { series: 'up{job="switchboard",instance="gateway:9464"}', values: '1x40' }], '25m', []),
        alert('SwitchboardAbsent', [other, { series: k8s, values: '0x40' }], '25m', []),
      ],
    };
    const file = join(tmp, 'alerts-absent.test.yml');
    writeFileSync(file, JSON.stringify(tests));
    const r = await runToExit('promtool', ['test', 'rules', file]);
    assert.equal(r.code, 0, r.out);
  });

  it('SwitchboardDevelopmentKeyExposed fires for a gateway whose switchboard_auth_development_key_exposed is 1, saying what to do (promtool test rules)', async () => {
    // The gauge (and a warn line) said so, but no shipped rule read it: an operator who watches alerts,
    // not logs, never heard that anyone could sign tokens the gateway accepts (found by a review).
    const gauge = (instance: string, values: string) => ({ series: `switchboard_auth_development_key_exposed{job="switchboard",instance="${instance}"}`, values });
    const tests = {
      rule_files: [resolve('deploy/prometheus/alerts.yml')],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [gauge('exposed:9464', '1x10'), gauge('own-keys:9464', '0x10'), gauge('fixed:9464', '1 1 0x8')],
          alert_rule_test: [
            {
              eval_time: '5m',
              alertname: 'SwitchboardDevelopmentKeyExposed',
              exp_alerts: [
                {
                  exp_labels: { severity: 'critical', job: 'switchboard', instance: 'exposed:9464' },
                  exp_annotations: {
                    summary:
                      "Switchboard exposed:9464 accepts tokens signed with the published development key (deploy/dev-keys): anyone can sign one, for any tenant and scope, admin included. Put your identity provider's keys in auth.keys or auth.jwksUrl instead and reload; the gateway's warn line says which key file or key set",
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    const file = join(tmp, 'alerts-dev-key.test.yml');
    writeFileSync(file, JSON.stringify(tests));
    const r = await runToExit('promtool', ['test', 'rules', file]);
    assert.equal(r.code, 0, r.out);
  });

  it('deploy/prometheus/prometheus.yml passes promtool check config (rule_files read from the repository)', async () => {
    // The compose file mounts alerts.yml at /etc/prometheus/alerts.yml; promtool reads rule files from disk.
    const text = readFileSync('deploy/prometheus/prometheus.yml', 'utf8');
    assert.ok(text.includes('/etc/prometheus/alerts.yml'));
    const file = join(tmp, 'prometheus.yml');
    writeFileSync(file, text.replace('/etc/prometheus/alerts.yml', resolve('deploy/prometheus/alerts.yml')));
    const r = await runToExit('promtool', ['check', 'config', file]);
    assert.equal(r.code, 0, r.out);
  });
});
