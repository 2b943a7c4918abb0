// How each image a bundled definition names is made offline, from Debian bookworm's packages:
// the packages, the files we add (src/engine/apps/images/files), the users and directories, and
// the Dockerfile-like settings (`docker import --change`). A recipe's content (this text and
// those files) is its tag: a second build of the same recipe is a lookup on the engine.
import { CONTRACT_LABELS } from '../../docker/erp-image-contract.js';

export interface FileToAdd {
  /** Under src/engine/apps/images/files. */
  source: string;
  /** Absolute path in the image. */
  target: string;
  mode: number;
}

export interface DebianImageRecipe {
  kind: 'debian';
  /** The name the definition uses (`repository:tag`): a moving tag, as Compose files name `postgres:15`. */
  image: string;
  packages: string[];
  files: FileToAdd[];
  /** Directories made after the packages, owned by a user the packages created. */
  directories: { path: string; owner: string; mode: number }[];
  /** Paths the packages leave that the image does not need (a default cluster, docs). */
  remove: string[];
  changes: { user: string; cmd: string[]; env: Record<string, string>; workdir: string; expose: number | null; labels: Record<string, string> };
}

/** The bundled demo image is built by erp-image.ts (our Node app, no Debian); only named here. */
export interface BundledErpRecipe {
  kind: 'bundled-erp';
  image: string;
}

export type ImageRecipe = DebianImageRecipe | BundledErpRecipe;

const DOCS = ['/usr/share/doc', '/usr/share/man', '/usr/share/info'];

/** The proxy image, the directory its volume is mounted on (certificates, Caddy's saved config), and its admin socket. */
export const PROXY_IMAGE = 'teaminfra-proxy:2.6';
export const PROXY_STATE_DIR = '/var/lib/teaminfra-proxy';
export const PROXY_ADMIN_SOCKET = '/run/teaminfra-proxy/admin.sock';

export const IMAGE_RECIPES: readonly ImageRecipe[] = [
  { kind: 'bundled-erp', image: 'teaminfra-erp:bundled' },
  {
    kind: 'debian',
    image: 'teaminfra-tryton:6.0',
    packages: ['tryton-server', 'tryton-modules-party', 'tryton-modules-account', 'tryton-modules-stock',
      'tryton-modules-sale', 'python3-psycopg2', 'tryton-sao'],
    files: [
      { source: 'trytond.conf', target: '/etc/trytond.conf', mode: 0o644 },
      { source: 'teaminfra_health.py', target: '/usr/lib/python3/dist-packages/teaminfra_health.py', mode: 0o644 },
      { source: 'teaminfra-tryton-migrate', target: '/usr/local/bin/teaminfra-tryton-migrate', mode: 0o755 },
    ],
    directories: [{ path: '/var/lib/trytond', owner: 'tryton', mode: 0o700 }],
    remove: DOCS,
    changes: {
      user: 'tryton', cmd: ['trytond', '--config', '/etc/trytond.conf'], workdir: '/var/lib/trytond', expose: 8000,
      env: { LANG: 'C.UTF-8' },
      labels: { [CONTRACT_LABELS.port]: '8000', [CONTRACT_LABELS.healthPath]: '/health', [CONTRACT_LABELS.dataDir]: '/var/lib/trytond' },
    },
  },
  {
    kind: 'debian',
    image: 'teaminfra-tryton-postgres:15',
    packages: ['postgresql-15'],
    files: [{ source: 'teaminfra-postgres-start', target: '/usr/local/bin/teaminfra-postgres-start', mode: 0o755 }],
    // /backup: where the snapshot and restore commands of a definition work (their working
    // directory); a fresh volume mounted there takes this owner, so pg_dump may write to it.
    directories: [{ path: '/var/lib/postgresql/data', owner: 'postgres', mode: 0o700 }, { path: '/run/postgresql', owner: 'postgres', mode: 0o2775 },
      { path: '/backup', owner: 'postgres', mode: 0o700 }],
    // The package's own cluster (pg_createcluster at install): ours is made on the volume at first start.
    remove: [...DOCS, '/var/lib/postgresql/15', '/etc/postgresql/15'],
    changes: {
      user: 'postgres', cmd: ['teaminfra-postgres-start'], workdir: '/var/lib/postgresql', expose: 5432,
      env: {
        PATH: '/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        PGDATA: '/var/lib/postgresql/data', LANG: 'C.UTF-8',
      },
      labels: { [CONTRACT_LABELS.port]: '5432', [CONTRACT_LABELS.dataDir]: '/var/lib/postgresql/data' },
    },
  },
  {
    // The reverse proxy of a Docker server (src/engine/docker/proxy): Debian's Caddy. Its admin
    // API listens only on a unix socket inside the container, which no volume or network shares,
    // so only the engine's API (an exec) reaches it. socat carries an admin request over that exec.
    kind: 'debian',
    image: PROXY_IMAGE,
    packages: ['caddy', 'ca-certificates', 'socat'],
    files: [{ source: 'teaminfra-proxy-bootstrap.json', target: '/etc/caddy/teaminfra-bootstrap.json', mode: 0o644 }],
    directories: [{ path: PROXY_STATE_DIR, owner: 'caddy', mode: 0o700 }, { path: '/run/teaminfra-proxy', owner: 'caddy', mode: 0o700 }],
    remove: DOCS,
    changes: {
      // --resume: after an engine restart it serves the configuration it last had until teaminfra
      // pushes the one rebuilt from the database (which it does at every start).
      user: 'caddy', cmd: ['caddy', 'run', '--resume', '--config', '/etc/caddy/teaminfra-bootstrap.json'], workdir: PROXY_STATE_DIR, expose: 443,
      env: { XDG_DATA_HOME: `${PROXY_STATE_DIR}/data`, XDG_CONFIG_HOME: `${PROXY_STATE_DIR}/config`, HOME: PROXY_STATE_DIR },
      labels: { 'io.teaminfra.proxy-admin': PROXY_ADMIN_SOCKET },
    },
  },
];

export function recipeOf(image: string): ImageRecipe | undefined {
  return IMAGE_RECIPES.find((recipe) => recipe.image === image);
}
