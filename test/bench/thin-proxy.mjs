#!/usr/bin/env node
// The thinnest HTTP-to-stdio MCP proxy Node.js allows, as a benchmark floor: one node:http server, one
// child, ids rewritten by a counter, JSON answers, and nothing else (no validation, no sessions beyond
// a constant id, no auth, no policy, no logs, no metrics, no timeouts). No gateway that parses HTTP and
// JSON in Node can spend less per call; its figures say how much of a gateway's cost is the platform.
// Usage: thin-proxy.mjs PORT COMMAND [ARGS...]
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';

const [port, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
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
    w.res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'thin' }).end(JSON.stringify(msg));
  }
});

createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8').on('data', (d) => (body += d));
  req.on('end', () => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method !== 'POST') return void res.writeHead(405).end(); // no standalone stream
    const msg = JSON.parse(body);
    if (msg.id === undefined) return void res.writeHead(202, { 'mcp-session-id': 'thin' }).end();
    const id = next++;
    waiting.set(id, { id: msg.id, res });
    msg.id = id;
    child.stdin.write(`${JSON.stringify(msg)}\n`);
  });
}).listen(Number(port), '127.0.0.1');

// Stopped by the harness: exit normally, so that --cpu-prof writes its profile.
process.on('SIGTERM', () => process.exit(0));
