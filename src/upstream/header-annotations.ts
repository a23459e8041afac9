import { invalidParamHeaders } from '../jsonrpc/param-headers.js';
import { taskOnly, type LeftOutReason } from './left-out-tools.js';

/**
 * A modern upstream's tool whose x-mcp-header annotations break the era's rules: a client of it must leave
 * it out (its arguments cannot be mirrored into headers), and says so. A task-only tool is left out too.
 */
export const invalidHeaderAnnotations: LeftOutReason = (tool) => {
  const reason = invalidParamHeaders(tool.inputSchema);
  return reason === undefined ? taskOnly(tool) : { message: 'tool left out: its x-mcp-header annotations are invalid', reason };
};
