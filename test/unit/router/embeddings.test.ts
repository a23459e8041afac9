// The embeddings client against a real loopback HTTP server answering what broken providers answer, and
// the fusion of the lexical and semantic rankings.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { embeddingsSchema, toolsSchema, toolsProblems } from '../../../src/config/tools-schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { EmbeddingsClient, EmbeddingsError } from '../../../src/router/embeddings-client.js';
import { SemanticRanker } from '../../../src/router/semantic-ranker.js';

describe('EmbeddingsClient', () => {
  let server: Server;
  let url: string;
  let answer: { status: number; body: string; delayMs?: number; cut?: 'stall' | 'break' } = { status: 200, body: '' };
  let requests = 0;
  const config = () => embeddingsSchema.parse({ url, model: 'm' });

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests++;
        if (answer.cut) {
          // Headers and half a body, then nothing more (stall) or a dropped connection (break).
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(answer.body.slice(0, answer.body.length / 2));
          if (answer.cut === 'break') setTimeout(() => res.socket?.destroy(), 20).unref();
          return;
        }
        const send = () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
        if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
        else send();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const data = (...vectors: unknown[]) => JSON.stringify({ data: vectors.map((embedding, index) => ({ index, embedding })) });
  const failure = async (body: string, status = 200, delayMs?: number, cut?: 'stall' | 'break'): Promise<EmbeddingsError> => {
    answer = { status, body, delayMs, cut };
    const err = await new EmbeddingsClient(config()).embed(['a', 'b'], 200).then(
      () => assert.fail('expected a refusal'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof EmbeddingsError, String(err));
    return err;
  };

  it('returns unit vectors in input order (by index, whatever the order of data)', async () => {
    answer = { status: 200, body: JSON.stringify({ data: [{ index: 1, embedding: [0, 2] }, { index: 0, embedding: [3, 4] }] }) };
    const [a, b] = await new EmbeddingsClient(config()).embed(['a', 'b'], 1000);
    assert.deepEqual([...a!].map((x) => Math.round(x * 100) / 100), [0.6, 0.8]);
    assert.deepEqual([...b!], [0, 1]);
  });

  it('refuses answers that would rank wrongly, each with its reason', async () => {
    assert.equal((await failure('not json')).reason, 'invalid');
    assert.equal((await failure(data([1, 2]))).reason, 'invalid', 'one vector for two inputs');
    assert.equal((await failure(data([1, 2], [1, 2, 3]))).reason, 'invalid', 'different lengths');
    assert.equal((await failure(data([1, 'x'], [1, 2]))).reason, 'invalid', 'not a number');
    assert.equal((await failure(data('AAAA', 'AAAA'))).reason, 'invalid', 'base64');
    assert.equal((await failure(JSON.stringify({ data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [1] }] }))).reason, 'invalid', 'index twice');
    const http = await failure('{"error":"bad key"}', 401);
    assert.equal(http.reason, 'http');
    assert.match(http.message, /HTTP 401/);
    assert.equal((await failure(data([1], [1]), 200, 1000)).reason, 'timeout');
    assert.equal((await failure(data([1], [1]), 200, undefined, 'stall')).reason, 'timeout', 'a body that stops coming');
    assert.equal((await failure(data([1], [1]), 200, undefined, 'break')).reason, 'unreachable', 'a body that breaks off');
  });

  it('a reload with the same model keeps the vectors; another model embeds again', async () => {
    answer = { status: 200, body: data([1, 0], [0, 1]) };
    const logger = createLogger('silent');
    const first = new SemanticRanker(config(), logger);
    assert.ok(await first.toolVectors(['a', 'b']));
    const asked = requests;
    const reloaded = new SemanticRanker({ ...config(), weight: 0.8, timeoutMs: 900 }, logger, undefined, first);
    assert.ok(await reloaded.toolVectors(['a', 'b']));
    assert.equal(requests, asked, 'same url and model: nothing asked again');
    const other = new SemanticRanker({ ...config(), model: 'm2' }, logger, undefined, reloaded);
    assert.ok(await other.toolVectors(['a', 'b']));
    assert.equal(requests, asked + 1, 'another model: embedded again');
  });

  it('says unreachable for a port nobody listens on', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await new EmbeddingsClient(embeddingsSchema.parse({ url: `http://127.0.0.1:${port}/`, model: 'm' })).embed(['a'], 1000).catch((e: unknown) => e);
    assert.ok(err instanceof EmbeddingsError && err.reason === 'unreachable', String(err));
  });
});

describe('SemanticRanker.fuse', () => {
  const ranker = (weight: number) => new SemanticRanker(embeddingsSchema.parse({ url: 'http://127.0.0.1:1/', model: 'm', weight }), createLogger('silent'));
  const tools = [new Float32Array([1, 0]), new Float32Array([0, 1]), new Float32Array([0.6, 0.8])];
  const query = new Float32Array([0, 1]);

  it('puts first what both rankings put high, and finds what the words missed', () => {
    // Lexical: 2 then 0; semantic: 1, 2, 0. Tool 1 has none of the query's words, and is still found.
    assert.deepEqual(ranker(0.5).fuse([2, 0], query, tools), [2, 0, 1]);
  });

  it('weight 1 is the semantic order', () => {
    assert.deepEqual(ranker(1).fuse([0, 2], query, tools), [1, 2, 0]);
  });

  it('a query vector of another length (the provider changed models) leaves the lexical ranking', () => {
    assert.deepEqual(ranker(0.5).fuse([2, 0], new Float32Array([1, 0, 0]), tools), [2, 0]);
  });

  it('weight 0 is the lexical ranking alone (nothing found only by meaning is added)', () => {
    assert.deepEqual(ranker(0).fuse([2, 0], query, tools), [2, 0]);
  });
});

describe('tools.embeddings config', () => {
  it('is for the search modes only', () => {
    const tools = toolsSchema.parse({ embeddings: { url: 'http://127.0.0.1:9/v1/embeddings', model: 'm' } });
    assert.deepEqual(toolsProblems(tools, ['a'], false, new Set()).map((p) => p.path.join('.')), ['embeddings']);
    assert.deepEqual(toolsProblems({ ...tools, exposure: 'search' }, ['a'], false, new Set()), []);
  });

  it('takes only http(s) URLs and known keys', () => {
    assert.throws(() => embeddingsSchema.parse({ url: 'file:///etc/passwd', model: 'm' }), /http/);
    assert.throws(() => embeddingsSchema.parse({ url: 'http://x/', model: 'm', apiKey: 'k' }), /apiKey|unrecognized/i);
  });
});
