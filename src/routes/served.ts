// The contract as the running service serves it: byte-for-byte the bundled spec, except
// that the server list starts with the server it is served from, so that docs and SDK
// generators pointed at this instance talk to this instance.
import { stringify } from 'yaml';
import openapi, { yamlSource } from '../../generated/openapi.js';
import { basePath } from '../contract/spec.js';

type Server = { url: string; description?: string; variables?: Record<string, unknown> };

// Only a plain host[:port] is echoed back into the document.
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** The origin to list first: PUBLIC_URL when configured, else the request's own. */
export function requestOrigin(publicUrl: string | undefined, protocol: string, host: string): string | undefined {
  if (publicUrl) return publicUrl;
  return HOST.test(host) ? `${protocol}://${host}` : undefined;
}

export function servedServers(origin: string | undefined): Server[] {
  const declared = openapi.servers as Server[];
  return origin ? [{ url: `${origin}${basePath}`, description: 'This server' }, ...declared] : declared;
}

export function servedJson(origin: string | undefined): string {
  return JSON.stringify({ ...openapi, servers: servedServers(origin) });
}

// The top-level `servers:` block of the hand-written YAML: its key line and every line
// after it that is indented or blank.
const SERVERS_BLOCK = /^servers:\n(?:(?:[ \t].*)?\n)*/m;

export function servedYaml(origin: string | undefined): string {
  return yamlSource.replace(SERVERS_BLOCK, `${stringify({ servers: servedServers(origin) })}\n`);
}
