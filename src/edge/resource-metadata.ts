import type { FastifyInstance, FastifyRequest } from 'fastify';

export interface ResourceMetadataOptions {
  /** The endpoint paths served now (a reload may add or remove some). */
  paths: () => readonly string[];
  publicUrl: (req: FastifyRequest) => string;
  /** Issuer URLs only, as the config in force says (a reload may change the issuer); when empty the field is left out (RFC 9728 makes it optional). */
  authorizationServers: () => readonly string[];
  scopesSupported: string[];
}

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): one document for the gateway as a whole and one
 * per endpoint path, telling a client which authorization server issues tokens for it.
 */
export function registerResourceMetadata(app: FastifyInstance, o: ResourceMetadataOptions): void {
  const doc = (req: FastifyRequest, path: string) => {
    const servers = o.authorizationServers();
    return {
      resource: `${o.publicUrl(req)}${path}`,
      ...(servers.length > 0 ? { authorization_servers: servers } : {}),
      bearer_methods_supported: ['header'],
      ...(o.scopesSupported.length > 0 ? { scopes_supported: o.scopesSupported } : {}),
      resource_name: 'Switchboard MCP gateway',
    };
  };
  app.get('/.well-known/oauth-protected-resource', async (req) => doc(req, ''));
  app.get<{ Params: { '*': string } }>('/.well-known/oauth-protected-resource/*', async (req, reply) => {
    const path = `/${req.params['*']}`;
    if (!o.paths().includes(path)) return reply.code(404).send({ message: `Route GET:${req.url} not found`, error: 'Not Found', statusCode: 404 });
    return doc(req, path);
  });
}
