import type { FastifyInstance, FastifyRequest } from 'fastify';

export interface ResourceMetadataOptions {
  paths: string[];
  publicUrl: (req: FastifyRequest) => string;
  /** Issuer URLs only; when empty the field is left out (RFC 9728 makes it optional). */
  authorizationServers: string[];
  scopesSupported: string[];
}

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): one document for the gateway as a whole and one
 * per endpoint path, telling a client which authorization server issues tokens for it.
 */
export function registerResourceMetadata(app: FastifyInstance, o: ResourceMetadataOptions): void {
  const doc = (req: FastifyRequest, path: string) => ({
    resource: `${o.publicUrl(req)}${path}`,
    ...(o.authorizationServers.length > 0 ? { authorization_servers: o.authorizationServers } : {}),
    bearer_methods_supported: ['header'],
    ...(o.scopesSupported.length > 0 ? { scopes_supported: o.scopesSupported } : {}),
    resource_name: 'Switchboard MCP gateway',
  });
  app.get('/.well-known/oauth-protected-resource', async (req) => doc(req, ''));
  for (const path of o.paths) app.get(`/.well-known/oauth-protected-resource${path}`, async (req) => doc(req, path));
}
