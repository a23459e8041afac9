// An OpenAI-compatible embeddings endpoint on a real loopback port, for the tests of hybrid tool search.
// No embedding model can run here (no network to fetch one), so the vectors come from a small table of
// concepts: each dimension is one concept, and a text's vector counts the words of each concept in it.
// That is enough to show what the gateway does with a provider (fusion, caching, refusals, failures):
// a task worded with none of a tool's words ("jot this down") still lands near it ("write").
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const CONCEPTS: readonly string[][] = [
  ['write', 'jot', 'save', 'note', 'record', 'overwrite'],
  ['delete', 'destroy', 'wipe', 'erase', 'nuke', 'remove'],
  ['read', 'contents', 'open', 'peek', 'show'],
  ['message', 'post', 'tell', 'announce', 'say'],
  ['directory', 'folder', 'entries', 'list'],
  ['issue', 'bug', 'ticket', 'problem'],
  ['repository', 'repo', 'project'],
];

/** The fixture's vector of a text: one count per concept, plus a constant so no vector is zero. */
export function conceptVector(text: string): number[] {
  const words = text.toLowerCase().split(/[^a-z]+/);
  return [...CONCEPTS.map((c) => words.filter((w) => c.includes(w)).length), 0.01];
}

export type EmbeddingsBehaviour = 'ok' | 'error' | 'slow' | 'short';

export interface EmbeddingsServer {
  url: string;
  /** Every request received: its inputs and headers. */
  requests: Array<{ inputs: string[]; headers: IncomingMessage['headers']; model: unknown }>;
  /** How the next requests are answered: ok; error (HTTP 500); slow (after `slowMs`); short (one vector too few). */
  behaviour: EmbeddingsBehaviour;
  slowMs: number;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const state = { requests: [] as EmbeddingsServer['requests'], behaviour: 'ok' as EmbeddingsBehaviour, slowMs: 3000 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const doc = JSON.parse(body) as { model?: unknown; input: string[] };
      state.requests.push({ inputs: doc.input, headers: req.headers, model: doc.model });
      const answer = () => {
        if (state.behaviour === 'error') return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"overloaded"}}');
        const inputs = state.behaviour === 'short' ? doc.input.slice(1) : doc.input;
        const data = inputs.map((t, index) => ({ object: 'embedding', index, embedding: conceptVector(t) }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: doc.model }));
      };
      if (state.behaviour === 'slow') setTimeout(answer, state.slowMs).unref();
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1/embeddings`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as EmbeddingsServer;
}
