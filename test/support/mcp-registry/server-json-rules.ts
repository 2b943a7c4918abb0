// The rules of the MCP registry's server.json format that our server.json relies on, written
// here from the registry's published schema (revision 2025-09-29, whose $id is SCHEMA_ID below).
// The machines that run the tests are offline and the schema ships in no npm package, so it is
// stated in our own words rather than copied in: what a server must have (a namespaced name, a
// short description, a version) and what a streamable-HTTP remote and its headers may say.
import { z } from 'zod';

export const SCHEMA_ID = 'https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json';

const input = z.object({
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  format: z.enum(['string', 'number', 'boolean', 'filepath']).optional(),
  value: z.string().optional(),
  isSecret: z.boolean().optional(),
  default: z.string().optional(),
  placeholder: z.string().optional(),
  choices: z.array(z.string()).optional(),
});

const inputWithVariables = input.extend({ variables: z.record(z.string(), input).optional() });

const remote = z.object({
  type: z.enum(['streamable-http', 'sse']),
  url: z.string().min(1),
  headers: z.array(inputWithVariables.extend({ name: z.string().min(1) })).optional(),
  // Our remote's URL template names {base_url}: described as the headers' variables are.
  variables: z.record(z.string(), input).optional(),
});

export const serverJsonRules = z.object({
  $schema: z.literal(SCHEMA_ID),
  name: z.string().min(3).max(200).regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/, 'a reverse-DNS namespace, a slash and a name'),
  description: z.string().min(1).max(100),
  version: z.string().min(1).max(255).refine((version) => version !== 'latest', 'a version, not "latest"'),
  title: z.string().min(1).max(100).optional(),
  websiteUrl: z.url().optional(),
  remotes: z.array(remote).optional(),
});
