// The names rule lives with the method table (src/jsonrpc/names.ts): policy needs the delimiter too.
export { DELIMITER, prefixed, splitPrefixed, isValidToolName, hasToolNameChars } from '../jsonrpc/names.js';
