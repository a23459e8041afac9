#!/usr/bin/env node
// The thin proxy (thin-proxy.mjs) rebuilt on the libraries the project's charter names for the request
// path, each used the way any gateway uses it and nothing more: a Fastify route (the body read as text,
// the answer written to the hijacked response, as the gateway does), one pino line per call (the audit trail, to stdout through pino's
// asynchronous destination), and prom-client's request counter and duration
// histogram with their labels. No validation, sessions, auth, policy or timeouts, as in the thin proxy.
// Its figures against the thin proxy's say what those libraries cost by themselves: the share of a
// gateway's budget over the platform that is spent before any of the gateway's own code runs.
// STACK_LAYERS (comma-separated, default `pino,metrics`) names the layers over Fastify to include, so
// that each library's share can be measured apart: `STACK_LAYERS=` is Fastify alone.
// Usage: stack-proxy.mjs PORT COMMAND [ARGS...]
import { spawn } from 'node:child_process';
import Fastify from 'fastify';
import pino from 'pino';
import { Counter, Histogram, Registry } from 'prom-client';

const [port, command, ...args] = process.argv.slice(2);
const layers = new Set((process.env.STACK_LAYERS ?? 'pino,metrics').split(',').filter(Boolean));
const logging = layers.has('pino');
const metrics = layers.has('metrics');
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const log = pino({ level: 'info', base: undefined }, pino.destination({ dest: 1, sync: false }));
const registry = new Registry();
const requests = new Counter({ name: 'requests_total', help: 'requests', labelNames: ['method', 'endpoint', 'upstream', 'outcome'], registers: [registry] });
const duration = new Histogram({ name: 'request_duration_seconds', help: 'duration', labelNames: ['method', 'endpoint', 'upstream', 'outcome'], registers: [registry] });
const waiting = new Map();
let next = 1;
let buffered = '';
child.stdout.setEncoding('utf8').on('data', (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    const msg = JSON.parse(line);
    const w = waiting.get(msg.id);
    if (!w) continue;
    waiting.delete(msg.id);
    msg.id = w.id;
    const outcome = msg.error ? 'error' : 'ok';
    const seconds = Number(process.hrtime.bigint() - w.started) / 1e9;
    const labels = { method: w.method, endpoint: '/mcp', upstream: 'up', outcome };
    if (metrics) {
      requests.inc(labels);
      duration.observe(labels, seconds);
    }
    if (logging) log.info({ audit: true, method: w.method, tool: w.tool, upstream: 'up', outcome, ms: seconds * 1000 }, 'call');
    // As the gateway answers: the reply hijacked and the body written with its length in one go (the
    // cheapest way out of Fastify; reply.send would add its onSend and serialization steps).
    const body = JSON.stringify(msg);
    w.reply.hijack();
    w.reply.raw.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'thin', 'content-length': String(Buffer.byteLength(body)) }).end(body);
  }
});

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
app.get('/metrics', async (_req, reply) => reply.header('content-type', registry.contentType).send(await registry.metrics()));
app.get('/mcp', async (_req, reply) => reply.code(405).send()); // no standalone stream, as the thin proxy
app.delete('/mcp', async (_req, reply) => reply.code(200).send());
app.post('/mcp', (req, reply) => {
  const msg = JSON.parse(req.body);
  if (msg.id === undefined) return void reply.code(202).header('mcp-session-id', 'thin').send();
  const id = next++;
  waiting.set(id, { id: msg.id, reply, method: msg.method, tool: msg.params?.name, started: process.hrtime.bigint() });
  msg.id = id;
  child.stdin.write(`${JSON.stringify(msg)}\n`);
});
await app.listen({ port: Number(port), host: '127.0.0.1' });

// Stopped by the harness: exit normally, so that --cpu-prof writes its profile.
process.on('SIGTERM', () => process.exit(0));
