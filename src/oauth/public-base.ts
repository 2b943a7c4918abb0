// Where this server is reached from outside, which names its OAuth issuer and its resources
// (RFC 8707 identifiers are absolute URLs). The operator's TEAMINFRA_PUBLIC_URL (or the app's
// publicUrl) when set, since behind a proxy the request cannot tell; else the request's own
// scheme and Host, which the routes check against the allowed host names first.
import type { FastifyRequest } from 'fastify';

export const MCP_RESOURCE_PATH = '/mcp';
export const API_RESOURCE_PATH = '/api';
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

export function publicBaseOf(request: FastifyRequest, configured = process.env.TEAMINFRA_PUBLIC_URL): string {
  const base = configured && configured.trim() !== '' ? configured.trim() : `${request.protocol}://${request.headers.host ?? request.hostname}`;
  return base.replace(/\/+$/, '');
}

export const mcpResourceOf = (base: string): string => base + MCP_RESOURCE_PATH;
export const apiResourceOf = (base: string): string => base + API_RESOURCE_PATH;
export const protectedResourceMetadataUrlOf = (base: string): string => base + PROTECTED_RESOURCE_METADATA_PATH;
