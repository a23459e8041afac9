import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { preflightHeaders } from './cors.js';

export interface ResourceMetadataOptions {
  /** The endpoint paths served now (a reload may add or remove some). */
  paths: () => readonly string[];
  publicUrl: (req: FastifyRequest) => string;
  /** The path of server.publicUrl ('' or '/prefix', no trailing slash): see documentPath. */
  basePath: string;
  /** Issuer URLs only, as the config in force says (a reload may change the issuer); when empty the field is left out (RFC 9728 makes it optional). */
  authorizationServers: () => readonly string[];
  /** scopes_supported of the document for `path` ('' for the gateway as a whole); when empty the field is left out. */
  scopesSupported: (path: string) => readonly string[];
}

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): one document for the gateway as a whole and one
 * per endpoint path, telling a client which authorization server issues tokens for it.
 */
export function registerResourceMetadata(app: FastifyInstance, o: ResourceMetadataOptions): void {
  const doc = (req: FastifyRequest, path: string) => {
    const servers = o.authorizationServers();
    const scopes = o.scopesSupported(path);
    return {
      resource: `${o.publicUrl(req)}${path}`,
      ...(servers.length > 0 ? { authorization_servers: servers } : {}),
      bearer_methods_supported: ['header'],
      ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
      resource_name: 'Switchboard MCP gateway',
    };
  };
  app.get('/.well-known/oauth-protected-resource', async (req, reply) => {
    reply.header('access-control-allow-origin', '*');
    return doc(req, '');
  });
  app.get<{ Params: { '*': string } }>('/.well-known/oauth-protected-resource/*', async (req, reply) => {
    reply.header('access-control-allow-origin', '*');
    const path = documentPath(`/${req.params['*']}`, o.basePath, o.paths());
    if (path === undefined) return reply.code(404).send({ message: `Route GET:${req.url} not found`, error: 'Not Found', statusCode: 404 });
    return doc(req, path);
  });
  app.options('/.well-known/oauth-protected-resource', preflight);
  app.options('/.well-known/oauth-protected-resource/*', preflight);
}

/**
 * The resource (its path under the public URL: '' for the gateway as a whole, or an endpoint's) whose document
 * `/.well-known/oauth-protected-resource<rest>` asks for, or undefined. Behind a proxy serving the gateway under
 * `basePath` (stripped before it gets here), `<publicUrl>/.well-known/…<endpoint>` (what every challenge names)
 * arrives as `<rest>` = the endpoint's path, and RFC 9728 §3.1's form, `<origin>/.well-known/…<basePath><endpoint>`
 * (what a client builds without a challenge), as it is: the prefix is not at its start. An endpoint's own path
 * goes first where both could match (an endpoint named like the prefix plus another's path).
 */
function documentPath(rest: string, basePath: string, paths: readonly string[]): string | undefined {
  if (paths.includes(rest)) return rest;
  if (basePath === '' || !rest.startsWith(basePath)) return undefined;
  const under = rest.slice(basePath.length);
  if (under === '') return '';
  return paths.includes(under) ? under : undefined;
}

/**
 * The documents are public and carry no credentials: any page may read them (`*`), and a browser's MCP
 * client must, to find its authorization server (its discovery sends MCP-Protocol-Version, so the browser
 * asks first). The MCP routes themselves still admit only the origins the guard allows.
 */
async function preflight(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const asked = req.headers['access-control-request-headers'];
  const headers = preflightHeaders('GET', typeof asked === 'string' ? asked : undefined, 'MCP-Protocol-Version');
  return reply.code(204).headers({ 'access-control-allow-origin': '*', allow: 'GET', ...headers }).send();
}
