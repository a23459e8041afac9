import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ConnectionCap } from '../listener/connection-cap.js';
import { httpDeadlines } from '../listener/http-deadlines.js';
import { PipelinedTurns } from '../listener/pipelined-turns.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/** How the metrics listener runs (from the config; defaults for a caller that builds it alone). */
export interface MetricsListenerOptions {
  /** Open connections at most (metrics.maxConnections); more are closed at accept. */
  maxConnections?: number;
  /** Complete request headers within this long of the accept (server.headersTimeoutMs). */
  headersTimeoutMs?: number;
  /** The whole request within this long (server.bodyTimeoutMs). */
  requestTimeoutMs?: number;
  /** Where a full listener is reported (at most once a minute). */
  log?: Logger;
}

/**
 * Answers the requests of one connection one at a time, each once the answer before it is written out,
 * and closes a connection with more than a few unanswered (PipelinedTurns). A client that wrote thousands
 * of scrapes in one packet and never read had every one rendered and its answer held in the process;
 * renders are one at a time process-wide (Metrics.render), so everyone else's scrapes waited behind them.
 */
function inTurn(turns: PipelinedTurns, req: IncomingMessage, res: ServerResponse, answer: () => Promise<void> | void): void {
  const socket = req.socket;
  void turns.take(socket, res)?.then(() => (socket.destroyed ? undefined : answer()));
}

/** What GET /healthz answers on the MCP listener (Fastify's JSON of `{ status: 'ok' }`), answered here too. */
const HEALTHZ_BODY = JSON.stringify({ status: 'ok' });

/**
 * /metrics (and /healthz, for the kubelet's liveness and startup probes) on its own port, so scraping and
 * probing never compete with MCP traffic and the port can stay inside the cluster while the gateway's own
 * port faces clients. With the admin listener's treatment: a small cap and the MCP listener's deadlines.
 * Node's defaults took any number of connections and kept a silent one 60 s, so anyone reaching the port
 * could hold connections until the process ran out of descriptors, which the MCP listener shares; its
 * callers are a few scrapers and the kubelet.
 */
export async function startMetricsServer(metrics: Metrics, host: string, port: number, path: string, o: MetricsListenerOptions = {}): Promise<{ server: Server; address: string }> {
  const turns = new PipelinedTurns();
  const server = createServer(httpDeadlines(o.headersTimeoutMs ?? 10_000, o.requestTimeoutMs ?? 30_000), (req, res) => inTurn(turns, req, res, () => answer(metrics, path, req, res)));
  const maxConnections = o.maxConnections ?? 16;
  new ConnectionCap({ max: maxConnections, warn: (dropped) => o.log?.warn({ maxConnections, dropped }, 'metrics listener full (metrics.maxConnections): further connections are closed at accept') }).attach(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as { address: string; port: number };
  return { server, address: `http://${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}${path}` };
}

/** One request's answer: the liveness probe, the scrape, or 404. */
function answer(metrics: Metrics, path: string, req: IncomingMessage, res: ServerResponse): Promise<void> | void {
  const url = (req.url ?? '').split('?')[0];
  if ((req.method === 'GET' || req.method === 'HEAD') && url === '/healthz') {
    // The liveness probe's door: the MCP listener's /healthz (same answer) closes connections at accept
    // once server.maxConnections are open, so a healthy pod held at its cap by SSE streams or a flood
    // failed liveness and was restarted with every session. This port has a cap of its own.
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(req.method === 'HEAD' ? undefined : HEALTHZ_BODY);
    return;
  }
  if (req.method !== 'GET' || url !== path) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    return;
  }
  return metrics.render(req.headers.accept).then(
    ({ contentType, body }) => void res.writeHead(200, { 'content-type': contentType }).end(body),
    (err: Error) => void res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
  );
}
