// The host's own address on a local engine's default bridge (docker0): where that engine's
// containers reach a program of this machine (the mail catcher, a test's ACME CA). Docker's
// answer names the gateway only when one was configured; with address pools (dockerd
// --default-address-pool) it gives the subnet alone, and docker0 holds its first address.
import { isIP } from 'node:net';
import type { DockerApi } from './docker-api.js';

/** The IPv4 gateway of the engine's default bridge network: as the engine states it, else the first address of its subnet (the one Docker gives docker0). */
export async function bridgeGateway(api: DockerApi): Promise<string | undefined> {
  const network = await api.json<{ IPAM?: { Config?: { Subnet?: string; Gateway?: string }[] | null } } | undefined>('GET', '/networks/bridge', { accept: [404] });
  const config = network?.IPAM?.Config?.find((each) => isIP(each.Gateway ?? '') === 4 || isIP(each.Subnet?.split('/')[0] ?? '') === 4);
  if (!config) return undefined;
  if (config.Gateway && isIP(config.Gateway) === 4) return config.Gateway;
  const [base = '', bits = '32'] = (config.Subnet as string).split('/');
  const value = base.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
  const size = 2 ** (32 - Number(bits));
  const first = value - (value % size) + 1;
  return [24, 16, 8, 0].map((shift) => Math.floor(first / 2 ** shift) % 256).join('.');
}
