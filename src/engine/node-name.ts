// A node's name: which servers' ERP services a `teaminfra serve` process runs (servers.node).
// Under the local driver a node is a machine, so the default is the host name; processes that
// share a name are one node (they see the same processes and files). Name a node explicitly
// (--node, TEAMINFRA_NODE) when the host name can change, as in a container.
import { hostname } from 'node:os';

export const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export function defaultNodeName(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEAMINFRA_NODE?.trim() || hostname();
}
