export * from './types.js';
export { ErrorCode } from './error-codes.js';
export { JsonRpcError } from './json-rpc-error.js';
export { validateMessage, parseText, isValidId } from './parse.js';
export { LineSplitter } from './line-splitter.js';
export { sseEvent, ssePriming, SSE_KEEPALIVE } from './sse.js';
export { notFound, NotFoundError } from './not-found.js';
export { SseParser, type SseMessage } from './sse-parser.js';
export { readSse } from './read-sse.js';
