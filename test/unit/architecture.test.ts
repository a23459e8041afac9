// The one-way data flow of ARCHITECTURE.md, enforced: each folder of src/ may import only the folders
// listed for it, and only edge/ (with app.ts) knows Fastify. A new arrow is a design decision: add it
// here, in the same commit, with the reason.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const SRC = join(import.meta.dirname, '..', '..', 'src');

const ALLOWED: Record<string, string[]> = {
  config: [],
  jsonrpc: [],
  // The caps and deadlines every listener (MCP, admin, metrics) applies to what it accepts: node:http only.
  listener: [],
  observability: ['listener'],
  transport: ['jsonrpc'],
  auth: ['config', 'errors', 'jsonrpc', 'observability'],
  sandbox: ['config', 'errors'],
  upstream: ['config', 'errors', 'jsonrpc', 'observability', 'sandbox', 'transport'],
  policy: ['auth', 'config', 'errors', 'jsonrpc', 'observability'],
  // The router applies pins (policy) to what upstreams list.
  router: ['config', 'errors', 'jsonrpc', 'observability', 'policy', 'upstream'],
  session: ['auth', 'config', 'errors', 'jsonrpc', 'observability', 'policy', 'router', 'transport'],
  // The 2026-07-28 era runs its requests through the session's stages, for a gateway-side standing per principal.
  modern: ['auth', 'config', 'errors', 'jsonrpc', 'observability', 'policy', 'router', 'session', 'upstream'],
  // Redis-backed stores implement session, policy and modern (used requestState) interfaces.
  cluster: ['auth', 'config', 'errors', 'jsonrpc', 'modern', 'observability', 'policy', 'session', 'transport'],
  edge: ['auth', 'cluster', 'config', 'errors', 'jsonrpc', 'listener', 'modern', 'observability', 'policy', 'router', 'session', 'transport'],
  // The admin API: its own Fastify listener over an AdminTarget interface (src/admin-target.ts implements it).
  admin: ['listener', 'observability'],
};

// The files at the root of src/: the error family every folder shares, the composition root (gateway,
// app) and the command-line entry points. No folder imports them, errors.ts excepted.
const ROOT: Record<string, string[]> = {
  errors: ['jsonrpc'],
  gateway: ['cluster', 'config', 'errors', 'jsonrpc', 'modern', 'observability', 'policy', 'router', 'session', 'upstream', 'sandbox', 'auth', 'transport'],
  app: ['*'],
  'app-lifecycle': ['admin', 'admin-target', 'cluster', 'config', 'edge', 'gateway', 'gateway-reload', 'observability', 'session'],
  // Applies a new config to the running gateway as a diff (config-diff.ts).
  'gateway-reload': ['config', 'edge-auth', 'gateway', 'observability', 'policy', 'router', 'upstream'],
  // The admin API's view of the gateway (src/admin/ sees only its interface).
  'admin-target': ['admin', 'auth', 'config', 'edge-auth', 'gateway', 'gateway-reload', 'policy', 'upstream'],
  'edge-auth': ['auth', 'config', 'edge', 'gateway', 'observability'],
  'gateway-metrics': ['edge', 'gateway', 'observability', 'session', 'upstream'],
  // The entry: the V8 flag and the early signal handlers first, then the command line (dynamically).
  main: ['heap-tuning', 'early-signals', 'cli'],
  cli: ['*'],
  // Handlers for signals that come while the modules load, before serve has its own (no imports).
  'early-signals': [],
  'pins-command': ['cluster', 'config', 'errors', 'observability', 'policy'],
  // Lists and revokes users' links in the shared vault (Redis), as the admin API does in memory.
  'links-command': ['cluster', 'config', 'observability', 'upstream'],
  // check-config reads the key files as serve's authenticator does (config/ may not import auth/), and
  // the pins file as serve's pin store does.
  'config-check': ['auth', 'config', 'policy'],
  // Starts a config's upstreams to print the exposed tool names (a Gateway without its edge).
  'tools-command': ['config', 'gateway', 'observability', 'router', 'upstream'],
  // Sets a V8 flag for the gateway process before anything else loads (main.ts imports it first).
  'heap-tuning': [],
};

/** Sizes the review holds the code to: a file is read in one sitting, a function at a glance. */
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 60;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\s)(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/gm)].map((m) => (m[1] ?? m[2])!);
}

describe('architecture', () => {
  it('every folder of src/ has a rule', () => {
    const folders = readdirSync(SRC).filter((d) => statSync(join(SRC, d)).isDirectory());
    assert.deepEqual(folders.filter((d) => !(d in ALLOWED)), []);
  });

  it('no folder imports against the flow', () => {
    const violations: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(SRC, file);
      const folder = rel.includes('/') ? rel.split('/')[0]! : undefined;
      for (const spec of imports(file)) {
        if (spec === 'fastify' || spec.startsWith('@fastify/')) {
          if (folder !== 'edge' && folder !== 'admin' && folder !== undefined) violations.push(`${rel} imports ${spec} (only edge/ and admin/ may)`);
          continue;
        }
        if (!spec.startsWith('.') || folder === undefined) continue;
        const target = relative(SRC, join(file, '..', spec));
        const targetFolder = target.includes('/') ? target.split('/')[0]! : target.replace(/\.js$/, '');
        if (targetFolder === folder) continue;
        if (!ALLOWED[folder]!.includes(targetFolder)) violations.push(`${rel} imports ${spec}`);
      }
    }
    assert.deepEqual(violations, []);
  });

  it('the files at the root of src/ have rules, and no folder imports them but errors.ts', () => {
    const root = readdirSync(SRC).filter((f) => f.endsWith('.ts')).map((f) => f.replace(/\.ts$/, ''));
    assert.deepEqual(root.filter((f) => !(f in ROOT)), []);
    const violations: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(SRC, file);
      const folder = rel.includes('/') ? rel.split('/')[0]! : undefined;
      for (const spec of imports(file)) {
        if (!spec.startsWith('.')) continue;
        const target = relative(SRC, join(file, '..', spec)).replace(/\.js$/, '');
        const targetFolder = target.includes('/') ? target.split('/')[0]! : target;
        if (folder === undefined) {
          const allowed = ROOT[rel.replace(/\.ts$/, '')] ?? [];
          if (!allowed.includes('*') && target !== 'errors' && !allowed.includes(targetFolder)) violations.push(`${rel} imports ${spec}`);
        } else if (!target.includes('/') && target !== 'errors') {
          violations.push(`${rel} imports the root file ${spec}`);
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  it('no circular import between files', () => {
    const graph = new Map<string, string[]>();
    for (const file of files(SRC)) {
      const deps = imports(file)
        .filter((s) => s.startsWith('.'))
        .map((s) => join(file, '..', s).replace(/\.js$/, '.ts'));
      graph.set(file, deps);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (f: string, path: string[]): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        cycles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(SRC, p)).join(' → '));
        return;
      }
      state.set(f, 'open');
      for (const d of graph.get(f) ?? []) visit(d, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of graph.keys()) visit(f, []);
    assert.deepEqual(cycles, []);
  });

  it(`every file is under ${MAX_FILE_LINES} lines and every function under ${MAX_FUNCTION_LINES}`, () => {
    const tooLong: string[] = [];
    for (const file of files(SRC)) {
      const text = readFileSync(file, 'utf8');
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const lines = source.getLineAndCharacterOfPosition(text.length).line + 1;
      if (lines >= MAX_FILE_LINES) tooLong.push(`${relative(SRC, file)}: ${lines} lines`);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const from = source.getLineAndCharacterOfPosition(node.getStart()).line;
          const to = source.getLineAndCharacterOfPosition(node.end).line;
          const name = 'name' in node && node.name ? node.name.getText(source) : '(anonymous)';
          if (to - from + 1 >= MAX_FUNCTION_LINES) tooLong.push(`${relative(SRC, file)}:${from + 1} ${name}: ${to - from + 1} lines`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.deepEqual(tooLong, []);
  });

  // V8's parser allocates a function literal written straight into a property (`obj.f = () => …`, also
  // `??=`) in the old generation (bytecode CreateClosure flag 1: pretenured). Per request, each such
  // closure, dead there, kept its request alive through every young-generation GC until a major one
  // (README, Performance: a 2026-07-28 gateway promoted whole requests). Declared first and then stored
  // (`const f = () => …; obj.f = f`) it is not pretenured. A property closure is allowed only on an
  // object that lives long (a connection, a session, an instance), said in a comment starting
  // "long-lived:" just above the statement or at the end of its line.
  it('no function literal is written straight into a property unless the object is long-lived (V8 pretenures it)', () => {
    const found: string[] = [];
    for (const file of files(SRC)) {
      const text = readFileSync(file, 'utf8');
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const assigns = new Set([ts.SyntaxKind.EqualsToken, ts.SyntaxKind.QuestionQuestionEqualsToken, ts.SyntaxKind.BarBarEqualsToken]);
      const visit = (node: ts.Node): void => {
        if (ts.isBinaryExpression(node) && assigns.has(node.operatorToken.kind) && (ts.isPropertyAccessExpression(node.left) || ts.isElementAccessExpression(node.left))) {
          let right: ts.Expression = node.right;
          while (ts.isParenthesizedExpression(right)) right = right.expression;
          if (ts.isArrowFunction(right) || ts.isFunctionExpression(right)) {
            let statement: ts.Node = node;
            while (!ts.isExpressionStatement(statement) && statement.parent && !ts.isBlock(statement.parent) && !ts.isSourceFile(statement.parent)) statement = statement.parent;
            const comments = [...(ts.getLeadingCommentRanges(text, statement.getFullStart()) ?? []), ...(ts.getTrailingCommentRanges(text, statement.end) ?? [])];
            const said = comments.some((c) => /^\/\/\s*long-lived:/.test(text.slice(c.pos, c.end)));
            if (!said) found.push(`${relative(SRC, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${node.left.getText(source)}`);
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.deepEqual(found, []);
  });
});
