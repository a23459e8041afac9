// The glob rule lives beside the names rule (src/jsonrpc/glob.ts): the router's curation matches tool names too.
export { globMatch, globToRegExp } from '../jsonrpc/glob.js';
