// The glob rule lives beside the names rule (src/jsonrpc/glob.ts): the router's curation matches tool names too.
export { globMatch } from '../jsonrpc/glob.js';
