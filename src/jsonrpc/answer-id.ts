/** A string token; the key of a member when followed by a colon. */
const STRING = /"(?:[^"\\]|\\.)*"/y;
const COLON = /\s*:\s*/y;
/** A whole number, seen to end (a number cut where the excerpt ends may be another's start). */
const NUMBER = /-?\d+(?=\s*[,}])/y;
/** The last member of the top-level object, its id: a message's closing brace is the last thing in it. */
const LAST_ID = /[{,]\s*"id"\s*:\s*(-?\d+)\s*\}\s*$/;

/**
 * The request a JSON-RPC message too large to parse answers, read from its start and its end (`head`,
 * `tail`: up to SKIPPED_EXCERPT_CHARS each, see SkippedExcerpt). An answer names "result" or "error" near
 * its start (before the large value), and its id either there (Python's SDK writes jsonrpc, id, result)
 * or as its last member (the TypeScript SDK writes result, jsonrpc, id). Undefined when it is not
 * plainly an answer (a request of the server's also has an id: failing the gateway's call of that id
 * would be wrong) or no numeric id shows (the gateway's ids are numbers).
 */
export function answeredId(head: string, tail: string): number | undefined {
  let depth = 0;
  let answer = false;
  let id: number | undefined;
  for (let i = 0; i < head.length; ) {
    const c = head[i]!;
    if (c === '{' || c === '[') depth++;
    if (c === '}' || c === ']') depth--;
    if (c !== '"') {
      i++;
      continue;
    }
    STRING.lastIndex = i;
    if (!STRING.test(head)) break; // the excerpt ends inside the string
    const key = head.slice(i + 1, STRING.lastIndex - 1);
    i = STRING.lastIndex;
    COLON.lastIndex = i;
    if (depth !== 1 || !COLON.test(head)) continue; // nested, or a value
    if (key === 'method') return undefined; // a request or a notification of the server's
    if (key === 'result' || key === 'error') answer = true;
    NUMBER.lastIndex = COLON.lastIndex;
    const n = key === 'id' ? NUMBER.exec(head) : null;
    if (n) id = Number(n[0]);
  }
  if (!answer) return undefined;
  return id ?? tailId(tail);
}

function tailId(tail: string): number | undefined {
  const m = LAST_ID.exec(tail);
  return m ? Number(m[1]) : undefined;
}
