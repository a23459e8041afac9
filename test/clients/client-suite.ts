import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startQuickstart, type Quickstart } from '../helpers/quickstart.js';
import { TRANSPORTS, installed, type MatrixRow, type TransportKey } from './matrix.js';

/** What every client of the matrix answers when the quick start's server asks it something. */
export const ANSWERS = {
  /** The text a client's sampling handler "generates". */
  sampled: 'sampled by the client matrix',
  /** The form a client's elicitation handler submits (server-everything asks for name, check, …). */
  elicited: { name: 'Ada Lovelace', check: true },
} as const;

/** One client connected through one transport, reduced to what the matrix asks of it. */
export interface MatrixClient {
  listTools(): Promise<string[]>;
  /** The text of the result's content. */
  callTool(name: string, args?: Record<string, unknown>): Promise<string>;
  /** Only for rows that claim progress: the result text and the progress values the client reported. */
  callWithProgress?(name: string, args: Record<string, unknown>): Promise<{ text: string; progress: number[] }>;
  close(): Promise<void>;
}

export type Connect = (transport: TransportKey, qs: Quickstart) => Promise<MatrixClient>;

/**
 * The matrix cases for one row, against deploy/quickstart.yaml served as a user serves it: per transport
 * of the row, list and call tools, and each feature the row claims. The cases of a file run one after
 * another: the quick start's server-everything is shared, and a server→client request it sends while
 * two sessions are busy cannot be told apart.
 */
export function clientSuite(row: MatrixRow, connect: Connect): void {
  describe(`client matrix: ${row.client}, ${row.package} ${installed(row.package).version}`, () => {
    let qs: Quickstart;
    before(async () => {
      qs = await startQuickstart();
    });
    after(async () => {
      await qs?.close();
    });
    for (const transport of row.transports) transportCases(row, transport, () => qs, connect);
  });
}

function transportCases(row: MatrixRow, transport: TransportKey, qs: () => Quickstart, connect: Connect): void {
  describe(TRANSPORTS[transport], () => {
    let client: MatrixClient;
    before(async () => {
      client = await connect(transport, qs());
    });
    after(async () => {
      await client?.close();
    });

    it('lists the quick start tools; get-env is hidden by the dev tenant policy', async () => {
      const names = await client.listTools();
      for (const n of ['echo', 'get-sum', 'trigger-long-running-operation']) assert.ok(names.includes(n), `${n} listed: ${names.join(', ')}`);
      assert.ok(!names.includes('get-env'), 'get-env is denied to the dev tenant');
    });

    it('calls a tool', async () => {
      assert.equal(await client.callTool('echo', { message: `hello from ${row.package}` }), `Echo: hello from ${row.package}`);
    });

    if (row.progress === true) {
      it('follows progress of a long-running call, then gets its result', async () => {
        assert.ok(client.callWithProgress, 'the row claims progress');
        const { text, progress } = await client.callWithProgress('trigger-long-running-operation', { duration: 1.5, steps: 3 });
        assert.match(text, /Long running operation completed/);
        // In order, and the first two (500 ms apart, so that a loaded machine does not read them in one chunk) at least. The server sends its last progress and the
        // result together; SDK 1.x (inside mcp-remote and LangChain too) dispatches a notification a
        // microtask after a response read in the same chunk (stdio, SSE), so it may drop that last
        // progress itself. test/integration/sdk-everything.test.ts holds the gateway to all three.
        assert.deepEqual(progress, [1, 2, 3].slice(0, progress.length));
        assert.ok(progress.length >= 2, `got ${progress.length} progress notifications before the result`);
      });
    }

    if (row.sampling === true) {
      it('completes a sampling round: the server asks the client for a completion', async () => {
        const text = await client.callTool('trigger-sampling-request', { prompt: 'Say hi', maxTokens: 10 });
        assert.ok(text.includes(ANSWERS.sampled), text);
      });
    }

    if (row.elicitation === true) {
      it('completes an elicitation round: the server asks the client to fill a form', async () => {
        const text = await client.callTool('trigger-elicitation-request');
        assert.match(text, /User provided the requested information/);
        assert.ok(text.includes(ANSWERS.elicited.name), text);
      });
    }
  });
}

/** The text parts of a tools/call result's content. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}
