import type { Server } from 'node:http';

/** What Fastify's instance shows of its servers (structural: this folder does not import Fastify). */
interface Listening {
  server: Server;
  addresses(): unknown[];
}

/**
 * The servers a listening Fastify instance opened besides `server`: on `localhost` it listens on the
 * first address and opens a server of its own for each further one (::1), built from the same options
 * (so the deadlines hold there) but without what was set on `server` afterwards: maxConnections, the
 * caps' listeners. Fastify keeps them under a symbol only (addresses() reads it); a Fastify that no
 * longer does throws here rather than leaving them uncapped.
 */
function furtherServers(app: Listening): Server[] {
  const key = Object.getOwnPropertySymbols(app).find((s) => s.description === 'fastify.serverBindings');
  const found = key === undefined ? undefined : (app as unknown as Record<symbol, unknown>)[key];
  const servers = Array.isArray(found) ? (found as Server[]) : [];
  if (servers.length < app.addresses().length - 1) {
    throw new Error(`Fastify listens on ${app.addresses().length} addresses, and the servers of ${app.addresses().length - 1 - servers.length} of them were not found: their connections would not count against the listener's cap`);
  }
  return servers;
}

/**
 * `attach` on the instance's server now and on each further server once it listens: one place for every
 * listener that caps its connections (MCP, admin). A further server that cannot be found is reported to
 * `missing` (it stays uncapped) and the listen goes on: an onListen hook that threw never called done().
 */
export function attachEveryServer(app: Listening & { addHook(name: 'onListen', hook: (done: () => void) => void): unknown }, attach: (server: Server) => void, missing: (err: unknown) => void): void {
  attach(app.server);
  app.addHook('onListen', (done) => {
    try {
      for (const server of furtherServers(app)) attach(server);
    } catch (err) {
      missing(err);
    }
    done();
  });
}
