// Issue 39: a service behind its server's proxy (Caddy, HTTPS with a certificate from Pebble)
// against the same container reached directly over HTTP, in the same run: requests/s and p99 of
// the service's page at a fixed concurrency, in interleaved rounds (drift on a shared machine
// falls on both; target: through the proxy >= 0.85 of direct); the time from add_service_domain
// to the first HTTPS answer at that domain, with the default proxy sync interval; and the failed
// requests of a client sending without pause through a redeploy (target: 0). Without an engine
// or Debian's Pebble it says so in one line and measures nothing.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, RetryAgent, type Dispatcher } from 'undici';
import { createDockerServer } from '../src/cli/docker-commands.js';
import { listAppContainers } from '../src/engine/docker/app-containers.js';
import { bridgeGateway } from '../src/engine/docker/bridge-gateway.js';
import { DockerApi } from '../src/engine/docker/docker-api.js';
import { parseEngineAddress } from '../src/engine/docker/engine-address.js';
import { buildErpImage } from '../src/engine/docker/erp-image.js';
import { proxyContainerName } from '../src/engine/docker/proxy/proxy-container.js';
import { pebbleInstalled, startPebble } from '../test/engine/docker/proxy/support/pebble.js';
import { startEngineBenchServer } from './support/engine-server.js';
import { envNumber } from './support/settings.js';

const MIN_THROUGHPUT_RATIO = 0.85;

interface LoadFigures { requests: number; failed: number; rps: number; p50Ms: number; p99Ms: number }

const percentile = (values: number[], share: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * share) - 1))] ?? NaN;
};

/** `connections` clients each sending GET `url` one after the other for `seconds`. */
async function load(url: string, dispatcher: Dispatcher, connections: number, seconds: number): Promise<{ latencies: number[]; failed: number; ms: number }> {
  const latencies: number[] = [];
  let failed = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < until) {
      const sent = performance.now();
      try {
        const answer = await request(url, { dispatcher, signal: AbortSignal.timeout(10_000) });
        await answer.body.arrayBuffer();
        if (answer.statusCode === 200) latencies.push(performance.now() - sent);
        else failed += 1;
      } catch {
        failed += 1;
      }
    }
  }));
  return { latencies, failed, ms: performance.now() - started };
}

const summary = (runs: { latencies: number[]; failed: number; ms: number }[]): LoadFigures => {
  const latencies = runs.flatMap((run) => run.latencies);
  const ms = runs.reduce((total, run) => total + run.ms, 0);
  return {
    requests: latencies.length, failed: runs.reduce((total, run) => total + run.failed, 0),
    rps: latencies.length / (ms / 1000), p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99),
  };
};

/** A container like `id` (image, command, environment, volumes, user), published on a loopback port the engine picks, started and answering. */
async function publishedTwin(api: DockerApi, id: string): Promise<string> {
  const inspected = await api.json<{
    Config: { Image: string; Env: string[]; Entrypoint: string[] | null; Cmd: string[] | null; User: string; ExposedPorts: Record<string, unknown> };
    HostConfig: { Mounts: unknown[] | null; Binds: string[] | null };
  }>('GET', `/containers/${id}/json`);
  const port = Object.keys(inspected.Config.ExposedPorts ?? {})[0] ?? '8080/tcp';
  const created = await api.json<{ Id: string }>('POST', '/containers/create', {
    body: {
      Image: inspected.Config.Image, Env: inspected.Config.Env, Entrypoint: inspected.Config.Entrypoint, Cmd: inspected.Config.Cmd,
      User: inspected.Config.User, ExposedPorts: { [port]: {} }, Labels: { 'io.teaminfra.bench': 'proxy-direct' },
      HostConfig: { Mounts: inspected.HostConfig.Mounts ?? [], Binds: inspected.HostConfig.Binds ?? [], PortBindings: { [port]: [{ HostIp: '127.0.0.1', HostPort: '' }] } },
    },
  });
  await api.json('POST', `/containers/${created.Id}/start`);
  const url = `http://127.0.0.1:${await publishedPort(api, created.Id)}/`;
  for (let waited = 0; (await request(url).then((answer) => answer.body.text().then(() => answer.statusCode), () => 0)) !== 200; waited += 100) {
    if (waited > 30_000) throw new Error('the direct twin of the service did not answer within 30 s');
    await sleep(100);
  }
  return created.Id;
}

async function publishedPort(api: DockerApi, id: string): Promise<number> {
  const inspected = await api.json<{ NetworkSettings: { Ports: Record<string, { HostPort: string }[] | null> } }>('GET', `/containers/${id}/json`);
  return Number(Object.values(inspected.NetworkSettings.Ports).find((bindings) => bindings?.[0])?.[0]?.HostPort);
}

export default async function proxyBench() {
  const host = process.env.TEAMINFRA_BENCH_DOCKER_HOST || 'unix:///var/run/docker.sock';
  const api = new DockerApi(parseEngineAddress(host));
  try {
    await api.ping(2_000);
  } catch {
    await api.close();
    console.log(`proxy: SKIPPED, no Docker engine answers at ${host} (start dockerd, or set TEAMINFRA_BENCH_DOCKER_HOST)`);
    return { skipped: `no Docker engine at ${host}` };
  }
  if (!pebbleInstalled) {
    await api.close();
    console.log('proxy: SKIPPED, Debian\'s pebble (the ACME test CA) is not installed (apt-get install pebble)');
    return { skipped: 'no pebble' };
  }
  const connections = Math.round(envNumber('BENCH_PROXY_CONNECTIONS', 8));
  const seconds = envNumber('BENCH_PROXY_SECONDS', 5);
  const rounds = Math.round(envNumber('BENCH_PROXY_ROUNDS', 3));
  const gateway = await bridgeGateway(api);
  const pebble = await startPebble([`IP:${gateway}`]);
  const tag = `bench${Date.now().toString(36)}`;
  const baseDomain = `apps.${tag}.test`;
  const saved = { ...process.env };
  let serverId = '';
  let twinId = '';
  const agents: Dispatcher[] = [];
  try {
    const caRoot = join(tmpdir(), `${tag}-acme-root.pem`);
    writeFileSync(caRoot, pebble.directoryCaPem);
    Object.assign(process.env, {
      TEAMINFRA_ACME_DIRECTORY: `https://${gateway}:${pebble.acmePort}/dir`, TEAMINFRA_ACME_CA_ROOT: caRoot,
      TEAMINFRA_PROXY_BIND_ADDRESS: '127.0.0.1', TEAMINFRA_DNS_SERVER: pebble.dnsServer,
    });
    const bench = await startEngineBenchServer('proxy');
    try {
      const { app, teamId, call, timed } = bench;
      const db = app.db.kysely;
      const { image } = await buildErpImage(api);
      serverId = await createDockerServer(db, { teamId, name: 'proxied', dockerHost: host, image });
      await db.updateTable('docker_servers').set({ base_domain: baseDomain, proxy_http_port: pebble.httpPort, proxy_https_port: pebble.tlsPort })
        .where('server_id', '=', serverId).execute();
      await pebble.pointName(`shop.${baseDomain}`, '127.0.0.1');
      const serviceId = (await timed('POST', '/api/service-erp', { server_id: serverId, name: 'Shop' })).operation.service_id as string;
      await timed('POST', `/api/service-erp/${serviceId}/start`);
      const url = (await call('GET', `/api/service-erp/${serviceId}`)).body.url as string;
      const root = await pebble.issuingRoot();
      const toThisMachine = { ca: root, lookup: (_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
        else callback(null, '127.0.0.1', 4);
      } };
      const trusted = new Agent({ connections, connect: toThisMachine as never });
      const direct = new Agent({ connections });
      agents.push(trusted, direct);
      for (let waited = 0; (await request(url, { dispatcher: trusted }).then((answer) => answer.body.text().then(() => answer.statusCode), () => 0)) !== 200; waited += 250) {
        if (waited > 90_000) throw new Error(`${url} did not answer over HTTPS within 90 s`);
        await sleep(250);
      }
      // The service's web container is published on no port (the proxy is its only way in): its
      // twin (same image, settings and volumes) published on loopback is the direct side.
      const web = (await listAppContainers(api, serviceId)).find((container) => container.running && container.appService === 'erp');
      if (!web) throw new Error('the service\'s web container does not run');
      twinId = await publishedTwin(api, web.id);
      const directUrl = `http://127.0.0.1:${await publishedPort(api, twinId)}/`;
      await load(directUrl, direct, connections, 1);
      await load(url, trusted, connections, 1);
      const directRuns = [];
      const proxiedRuns = [];
      for (let round = 1; round <= rounds; round++) {
        directRuns.push(await load(directUrl, direct, connections, seconds));
        proxiedRuns.push(await load(url, trusted, connections, seconds));
        console.log(`round ${round}: direct ${Math.round(directRuns.at(-1)!.latencies.length / seconds)} req/s, through the proxy ${Math.round(proxiedRuns.at(-1)!.latencies.length / seconds)} req/s`);
      }
      await api.json('DELETE', `/containers/${twinId}`, { query: { force: 1 } });
      twinId = '';
      const directFigures = summary(directRuns);
      const proxiedFigures = summary(proxiedRuns);

      // add_service_domain to the first HTTPS answer at it, the proxy synced on its default interval.
      const domain = `erp.${tag}-shop.test`;
      await pebble.pointName(domain, '127.0.0.1');
      const added = performance.now();
      const answer = await call('POST', `/api/service-erp/${serviceId}/domains`, { domain });
      if (answer.status !== 200) throw new Error(`add_service_domain answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      const domainUrl = `https://${domain}:${pebble.tlsPort}/health`;
      while ((await request(domainUrl, { dispatcher: trusted, signal: AbortSignal.timeout(5_000) }).then((got) => got.body.text().then(() => got.statusCode), () => 0)) !== 200) {
        if (performance.now() - added > 120_000) throw new Error(`${domain} did not answer over HTTPS within 120 s of add_service_domain`);
        await sleep(100);
      }
      const domainToHttpsMs = performance.now() - added;

      // A client sending without pause through a redeploy, as browsers do (a request on a connection closed while idle is sent again).
      const browserLike = new RetryAgent(trusted, {
        statusCodes: [],
        retry: (error, { state }, callback) => (state.counter > 2 || !['UND_ERR_SOCKET', 'ECONNRESET'].includes((error as { code?: string }).code ?? '')
          ? callback(error) : setTimeout(() => callback(null), 10)),
      });
      agents.push(browserLike);
      let loading = true;
      const during = (async () => {
        const runs = [];
        while (loading) runs.push(await load(url, browserLike, 2, 1));
        return runs;
      })();
      await timed('POST', `/api/service-erp/${serviceId}/redeploy`);
      await sleep(1_000);
      loading = false;
      const redeployLoad = summary(await during);

      await timed('DELETE', `/api/service-erp/${serviceId}`);

      // What a person waits more for each page: the proxy's own cost (TLS and one more hop), which
      // the throughput ratio hides when the page costs the service almost nothing.
      const ratios = {
        proxiedOverDirectThroughput: proxiedFigures.rps / directFigures.rps, proxiedOverDirectP99: proxiedFigures.p99Ms / directFigures.p99Ms,
        addedP50Ms: proxiedFigures.p50Ms - directFigures.p50Ms,
      };
      const met = ratios.proxiedOverDirectThroughput >= MIN_THROUGHPUT_RATIO && redeployLoad.failed === 0;
      console.log(`direct HTTP: ${directFigures.rps.toFixed(0)} req/s, p50 ${directFigures.p50Ms.toFixed(2)} ms, p99 ${directFigures.p99Ms.toFixed(2)} ms; through the proxy over HTTPS: ` +
        `${proxiedFigures.rps.toFixed(0)} req/s, p50 ${proxiedFigures.p50Ms.toFixed(2)} ms, p99 ${proxiedFigures.p99Ms.toFixed(2)} ms (ratio ${ratios.proxiedOverDirectThroughput.toFixed(3)}, target >= ${MIN_THROUGHPUT_RATIO})`);
      console.log(`add_service_domain to the first HTTPS answer: ${Math.round(domainToHttpsMs)} ms; redeploy under load: ${redeployLoad.requests} answered, ${redeployLoad.failed} failed (target 0); target ${met ? 'met' : 'NOT met'}`);
      return {
        connections, seconds, rounds, direct: directFigures, proxied: proxiedFigures, domainToHttpsMs,
        redeployUnderLoad: { answered: redeployLoad.requests, failed: redeployLoad.failed }, ratios,
        target: { met, minThroughputRatio: MIN_THROUGHPUT_RATIO, failedDuringRedeploy: 0 },
      };
    } finally {
      await bench.close();
    }
  } finally {
    for (const agent of agents) await agent.close().catch(() => undefined);
    if (twinId) await api.json('DELETE', `/containers/${twinId}`, { query: { force: 1 }, accept: [404] }).catch(() => undefined);
    if (serverId) {
      await api.json('DELETE', `/containers/${proxyContainerName(serverId)}`, { query: { force: 1 }, accept: [404] }).catch(() => undefined);
      await api.json('DELETE', `/networks/${proxyContainerName(serverId)}`, { accept: [404, 409] }).catch(() => undefined);
      await api.json('DELETE', `/volumes/${proxyContainerName(serverId)}`, { accept: [404, 409] }).catch(() => undefined);
    }
    for (const name of ['TEAMINFRA_ACME_DIRECTORY', 'TEAMINFRA_ACME_CA_ROOT', 'TEAMINFRA_PROXY_BIND_ADDRESS', 'TEAMINFRA_DNS_SERVER']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    await pebble.stop();
    await api.close();
  }
}
