// App definitions: a Compose file becomes the typed model, and what a team must never get
// through a definition is refused with a sentence naming the service and the key.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledApp, BUNDLED_APP_NAMES } from '../../../src/engine/apps/bundled-apps.js';
import { AppDefinitionError, parseAppDefinition } from '../../../src/engine/apps/parse-app-definition.js';
import { renderEnvironment } from '../../../src/engine/apps/render-environment.js';
import { smtpUri } from '../../../src/engine/apps/smtp-uri.js';
import { packageRoot } from '../../../src/package-root.js';

const MINIMAL = `
name: shop
services:
  web:
    image: shop:1
    ports: ["8000"]
x-teaminfra:
  web: web
`;

/** The sentences a refused file gets; fails the test when the file is accepted. */
function problemsOf(text: string, name?: string): string[] {
  try {
    parseAppDefinition(text, name);
  } catch (error) {
    if (error instanceof AppDefinitionError) return error.problems;
    throw error;
  }
  throw new Error('the definition was accepted');
}

/** MINIMAL with lines added to the web service. */
function withWeb(lines: string): string {
  return MINIMAL.replace('    ports: ["8000"]\n', () => `    ports: ["8000"]\n${lines.replace(/^/gm, '    ')}\n`);
}

describe('parseAppDefinition', () => {
  it('builds the model of the bundled tryton definition: two containers in start order, the web port, the commands as argument arrays', () => {
    const tryton = bundledApp('tryton')!;
    expect(tryton.containers.map((container) => container.name)).toEqual(['database', 'tryton']);
    expect(tryton.web).toEqual({ service: 'tryton', port: 8000, healthPath: '/health' });
    expect(tryton.database).toEqual({ service: 'database' });
    expect(tryton.deadlines).toEqual({ startMs: 120_000, migrateMs: 1_800_000 });
    expect(tryton.secrets).toEqual(['DB_PASSWORD', 'ADMIN_PASSWORD']);
    expect(tryton.commands.snapshot).toEqual({ service: 'database', command: ['pg_dump', '--format=custom', '--file=tryton.dump'], user: null });
    expect(tryton.commands.neutralize?.command).toContain('--command=UPDATE ir_cron SET active = false');
    const app = tryton.containers[1]!;
    expect(app.dependsOn).toEqual([{ service: 'database', condition: 'service_healthy' }]);
    expect(app.volumes).toEqual([{ volume: 'files', target: '/var/lib/trytond', readOnly: false }]);
    expect(app.environment.TRYTOND_DATABASE__URI).toEqual([
      { text: 'postgresql://tryton:' }, { variable: 'DB_PASSWORD' }, { text: '@database:5432/' },
    ]);
    expect(tryton.containers[0]!.healthcheck).toEqual({
      test: ['pg_isready', '--host', '127.0.0.1', '--username', 'tryton', '--dbname', 'tryton'],
      intervalMs: 2_000, timeoutMs: 5_000, retries: 60, startPeriodMs: 0,
    });
  });

  it('parses every bundled definition under its own name', () => {
    for (const name of BUNDLED_APP_NAMES) expect(bundledApp(name)!.name).toBe(name);
    expect(bundledApp('demo')!.web).toEqual({ service: 'erp', port: 8080, healthPath: '/health' });
  });

  it('takes the operator\'s --name over the file\'s name, and refuses a file with neither', () => {
    expect(parseAppDefinition(MINIMAL, 'other').name).toBe('other');
    expect(problemsOf(MINIMAL.replace('name: shop\n', ''))).toEqual([
      'The definition has no name: give the file a top-level "name" or pass --name.',
    ]);
    expect(problemsOf(MINIMAL, 'Bad Name')[0]).toContain('The name "Bad Name" must be lower-case');
  });

  it('refuses a host bind mount, short or long, naming the service and the path', () => {
    expect(problemsOf(withWeb('volumes: ["/etc:/host-etc"]'))).toEqual([
      'Service "web" mounts the host path "/etc" (a bind mount): refused, because a team\'s container must not reach the machine\'s files; use a named volume ("data:/path").',
    ]);
    expect(problemsOf(withWeb('volumes: ["./src:/app"]'))[0]).toContain('mounts the host path "./src"');
    expect(problemsOf(withWeb('volumes:\n  - { type: bind, source: /var/run/docker.sock, target: /s }'))[0])
      .toContain('Service "web" mounts the host path "/var/run/docker.sock"');
  });

  it('refuses privileged mode, host namespaces, added capabilities and devices, each with its sentence', () => {
    expect(problemsOf(withWeb('privileged: true'))).toEqual(['Service "web" sets "privileged": refused, because privileged mode gives the container the whole machine.']);
    expect(problemsOf(withWeb('network_mode: host'))).toEqual(['Service "web" sets "network_mode: host": refused, because it would share the machine\'s network with the container.']);
    expect(problemsOf(withWeb('pid: host'))).toEqual(['Service "web" sets "pid: host": refused, because it would share the machine\'s processes with the container.']);
    expect(problemsOf(withWeb('cap_add: [SYS_ADMIN]'))).toEqual(['Service "web" sets "cap_add": refused, because added capabilities give the container powers over the machine.']);
    expect(problemsOf(withWeb('devices: ["/dev/kvm:/dev/kvm"]'))).toEqual(['Service "web" sets "devices": refused, because devices give the container the machine\'s hardware.']);
  });

  it('refuses by name every Compose key outside the subset, at the top and in a service, all at once', () => {
    const problems = problemsOf(`${withWeb('restart: always\nentrypoint: [sh]')}configs: {}\n`);
    expect(problems).toEqual([
      'The top-level Compose key "configs" is not supported by teaminfra; remove it.',
      'Service "web" uses the Compose key "restart", which teaminfra does not support; remove it.',
      'Service "web" uses the Compose key "entrypoint", which teaminfra does not support; remove it.',
    ]);
    expect(problemsOf(MINIMAL.replace('  web: web\n', '  web: web\n  backup-every: 1h\n'))[0])
      .toBe('"x-teaminfra" has keys teaminfra does not know: backup-every; remove them.');
  });

  it('refuses a command written as one string: commands are argument arrays, never split by a shell', () => {
    expect(problemsOf(withWeb('command: "trytond --config /etc/trytond.conf"'))[0])
      .toBe('Service "web", key "command", must be a list of arguments, such as ["pg_dump", "-Fc"], not one string.');
    expect(problemsOf(withWeb('healthcheck:\n  test: "curl -f localhost || exit 1"'))[0]).toContain('Service "web" has a shell healthcheck');
    expect(problemsOf(MINIMAL.replace('  web: web\n', '  web: web\n  commands:\n    snapshot: { service: web, command: "pg_dump > x" }\n'))[0])
      .toContain('"x-teaminfra.commands.snapshot.command" must be a list of arguments');
  });

  it('checks what refers to what: dependencies, volumes, commands, variables, the web service and its one port', () => {
    const problems = problemsOf(`
name: shop
services:
  web:
    image: shop:1
    environment: { URL: "http://\${NOT_A_SECRET}/" }
    volumes: ["undeclared:/data"]
    depends_on: [db]
    ports: ["127.0.0.1:8000:8000"]
  worker:
    image: shop:1
    ports: ["9000"]
x-teaminfra:
  web: web
  database: postgres
  commands:
    migrate: { service: nowhere, command: [migrate] }
`);
    expect(problems).toEqual([
      expect.stringContaining('Service "web", environment URL names ${NOT_A_SECRET}, which is neither a secret'),
      'Service "web" depends on "db", which is not a service of this file.',
      'Service "web" mounts the volume "undeclared", which the top-level "volumes" does not declare.',
      'Service "worker" publishes a port, but only the web-facing service ("web") may; remove its "ports".',
      'Service "web" publishes "127.0.0.1:8000:8000": give only the container\'s port ("8000"); teaminfra chooses the address and port on the machine.',
      'x-teaminfra.database names "postgres", which is not a service of this file.',
      'x-teaminfra.commands.migrate runs in "nowhere", which is not a service of this file.',
    ]);
  });

  it('orders containers after what they depend on, and refuses a cycle', () => {
    const ordered = parseAppDefinition(`
name: shop
services:
  web: { image: a, ports: ["80"], depends_on: [api] }
  api: { image: b, depends_on: { db: { condition: service_healthy } } }
  db: { image: c, healthcheck: { test: [CMD, pg_isready] } }
x-teaminfra: { web: web }
`);
    expect(ordered.containers.map((each) => each.name)).toEqual(['db', 'api', 'web']);
    expect(problemsOf(`
name: shop
services:
  web: { image: a, ports: ["80"], depends_on: [api] }
  api: { image: b, depends_on: [web] }
x-teaminfra: { web: web }
`)).toEqual(['The services depend on each other in a cycle: web -> api -> web.']);
  });

  it('refuses waiting for a service to be healthy when it has no healthcheck, and waiting for one to complete', () => {
    const waiting = (database: string, condition = 'service_healthy') => `
name: shop
services:
  web: { image: a, ports: ["80"], depends_on: { db: { condition: ${condition} } } }
  db: ${database}
x-teaminfra: { web: web }
`;
    expect(problemsOf(waiting('{ image: c }'))).toEqual([
      'Service "web" waits for "db" to be healthy (condition: service_healthy), but "db" has no healthcheck in this file; ' +
        'give it one (healthcheck: test: ["CMD", ...]) or wait only for its start (condition: service_started).',
    ]);
    expect(problemsOf(waiting('{ image: c, healthcheck: { test: [CMD, pg_isready], disable: true } }'))[0]).toContain('but "db" has no healthcheck');
    expect(parseAppDefinition(waiting('{ image: c, healthcheck: { test: [CMD, pg_isready] } }')).containers[1]!.dependsOn)
      .toEqual([{ service: 'db', condition: 'service_healthy' }]);
    expect(parseAppDefinition(waiting('{ image: c }', 'service_started')).containers.map((each) => each.name)).toEqual(['db', 'web']);
    expect(problemsOf(waiting('{ image: c }', 'service_completed_successfully'))).toEqual([
      'Service "web" waits for "db" to complete (condition: service_completed_successfully), but teaminfra runs every service for as long ' +
        'as the service runs; a step before the app starts is x-teaminfra.commands.migrate.',
    ]);
  });

  it('names the key a typo was meant to be, wherever it is, and still says to remove a key it does not know', () => {
    expect(problemsOf(withWeb('healtcheck:\n  test: [CMD, true]'))).toEqual([
      'Service "web" uses the key "healtcheck", which teaminfra does not know; did you mean "healthcheck"?',
    ]);
    expect(problemsOf(withWeb('comand: [serve]'))).toEqual(['Service "web" uses the key "comand", which teaminfra does not know; did you mean "command"?']);
    expect(problemsOf(`${MINIMAL}volume: {}\n`)).toEqual(['The top-level key "volume" is not one teaminfra knows; did you mean "volumes"?']);
    expect(problemsOf(MINIMAL.replace('  web: web\n', '  web: web\n  helth-path: /up\n  backup-every: 1h\n'))).toEqual([
      '"x-teaminfra" has the key "helth-path", which teaminfra does not know; did you mean "health-path"?',
      '"x-teaminfra" has keys teaminfra does not know: backup-every; remove them.',
    ]);
    expect(problemsOf(withWeb('healthcheck:\n  test: [CMD, pg_isready]\n  intervall: 5s'))).toEqual([
      'Service "web", key "healthcheck", has the key "intervall", which teaminfra does not know; did you mean "interval"?',
    ]);
    expect(problemsOf(MINIMAL.replace('  web: web\n', '  web: web\n  commands:\n    snapshots: { service: web, command: [dump] }\n'))).toEqual([
      '"x-teaminfra.commands" has the key "snapshots", which teaminfra does not know; did you mean "snapshot"?',
    ]);
    expect(problemsOf(MINIMAL.replace('  web: web\n', '  web: web\n  commands:\n    migrate: { service: web, comand: [up] }\n'))).toContain(
      '"x-teaminfra.commands.migrate" has the key "comand", which teaminfra does not know; did you mean "command"?',
    );
    // A key already there is not what its near twin meant: that one is to be removed.
    expect(problemsOf(withWeb('healthcheck: { test: [CMD, true] }\nhealthchek: { test: [CMD, true] }'))).toEqual([
      'Service "web" uses the Compose key "healthchek", which teaminfra does not support; remove it.',
    ]);
  });

  it('refuses a database that a restore would wait for without a healthcheck', () => {
    const restoring = (healthcheck: string) => `
name: shop
services:
  web: { image: a, ports: ["80"] }
  db: { image: c, volumes: ["data:/var/lib/db"]${healthcheck} }
volumes: { data: {} }
x-teaminfra:
  web: web
  database: db
  commands:
    snapshot: { service: db, command: [dump] }
    restore: { service: db, command: [load] }
`;
    expect(problemsOf(restoring(''))).toEqual([
      'x-teaminfra.database names "db", which has no healthcheck: a restore or copy starts it on new volumes and runs the restore command ' +
        'once it is healthy, so give it one (healthcheck: test: ["CMD", ...]).',
    ]);
    expect(parseAppDefinition(restoring(', healthcheck: { test: [CMD, ready] }')).database).toEqual({ service: 'db' });
  });

  it('refuses a destroy command, which no step runs', () => {
    expect(problemsOf(MINIMAL.replace('  web: web\n', '  web: web\n  commands:\n    destroy: { service: web, command: [dropdb, books] }\n'))).toEqual([
      '"x-teaminfra.commands" has keys teaminfra does not know: destroy; remove them.',
    ]);
  });

  it('names the container port given when the web service publishes it with a host part, or publishes several', () => {
    const publishing = (ports: string) => MINIMAL.replace('ports: ["8000"]', `ports: ${ports}`);
    expect(problemsOf(publishing('["127.0.0.1:8080:5762"]'))).toEqual([
      'Service "web" publishes "127.0.0.1:8080:5762": give only the container\'s port ("5762"); teaminfra chooses the address and port on the machine.',
    ]);
    expect(problemsOf(publishing('["9000:3000/tcp"]'))[0]).toContain('give only the container\'s port ("3000")');
    expect(problemsOf(publishing('["5762", "5763"]'))).toEqual([
      'Service "web" is web-facing and must publish exactly one port; it publishes 2 ("5762", "5763"): keep only the one it serves on.',
    ]);
    expect(problemsOf(publishing('[]'))[0]).toContain('it publishes none');
    expect(parseAppDefinition(publishing('[{ target: 5762 }]')).web.port).toBe(5762);
  });

  it('gives the first login admin with the ADMIN_PASSWORD secret, or the login and fields the definition states', () => {
    expect(bundledApp('tryton')!.initialCredentials).toEqual({ login: [{ text: 'admin' }], fields: {} });
    expect(bundledApp('demo')!.initialCredentials).toBeNull();
    const stated = parseAppDefinition(MINIMAL.replace('  web: web\n', `  web: web
  secrets: [ADMIN_PASSWORD, DB_PASSWORD]
  initial-credentials:
    login: owner-\${TEAMINFRA_SERVICE_ID}
    fields: { company: "\${TEAMINFRA_SERVICE_NAME} Ltd", database: books, year: 2026 }
`));
    expect(stated.initialCredentials).toEqual({
      login: [{ text: 'owner-' }, { variable: 'TEAMINFRA_SERVICE_ID' }],
      fields: { company: [{ variable: 'TEAMINFRA_SERVICE_NAME' }, { text: ' Ltd' }], database: [{ text: 'books' }], year: [{ text: '2026' }] },
    });
  });

  it('refuses initial credentials without the ADMIN_PASSWORD secret, a secret in the login, and what is not known at create', () => {
    const stating = (secrets: string, credentials: string) => MINIMAL.replace('  web: web\n', `  web: web\n  secrets: ${secrets}\n  initial-credentials: ${credentials}\n`);
    expect(problemsOf(stating('[DB_PASSWORD]', '{ login: owner }'))).toEqual([
      'x-teaminfra.initial-credentials gives the password of the secret ADMIN_PASSWORD, which x-teaminfra.secrets does not declare; add it there.',
    ]);
    expect(problemsOf(stating('[ADMIN_PASSWORD, DB_PASSWORD]', '{ login: "\${DB_PASSWORD}" }'))).toEqual([
      'x-teaminfra.initial-credentials.login names ${DB_PASSWORD}, which is not known when the service is created; it may name TEAMINFRA_SERVICE_ID, TEAMINFRA_SERVICE_NAME.',
    ]);
    expect(problemsOf(stating('[ADMIN_PASSWORD]', '{ fields: { url: "\${TEAMINFRA_PUBLIC_URL}" } }'))).toEqual([
      'x-teaminfra.initial-credentials.fields.url names ${TEAMINFRA_PUBLIC_URL}, which is not known when the service is created; ' +
        'it may name TEAMINFRA_SERVICE_ID, TEAMINFRA_SERVICE_NAME, ADMIN_PASSWORD.',
    ]);
    expect(problemsOf(stating('[ADMIN_PASSWORD]', '{ fields: { Company: x } }'))).toEqual([
      'The name "Company" in "x-teaminfra.initial-credentials.fields" must be a lower-case name such as company.',
    ]);
    expect(problemsOf(stating('[ADMIN_PASSWORD]', '{ logn: x }'))).toEqual([
      '"x-teaminfra.initial-credentials" has the key "logn", which teaminfra does not know; did you mean "login"?',
    ]);
  });

  it('refuses YAML that is not valid, duplicate keys, and alias bombs, with a sentence', () => {
    expect(problemsOf('services: [unclosed')[0]).toMatch(/^The file is not valid YAML: /);
    expect(problemsOf(`${MINIMAL}name: again\n`)[0]).toMatch(/^The file is not valid YAML: .*[Uu]nique/);
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`)].join('\n');
    expect(problemsOf(bomb)[0]).toMatch(/^The file cannot be read as YAML: /);
  });

  it('keeps $$ as a literal dollar and refuses a lone $', () => {
    expect(parseAppDefinition(withWeb('environment: { PRICE: "$$5" }')).containers[0]!.environment.PRICE).toEqual([{ text: '$' }, { text: '5' }]);
    expect(problemsOf(withWeb('environment: { PRICE: "$5" }'))[0]).toContain('write "$$" for a literal dollar sign');
  });
});

describe('docs/app-definitions.md', () => {
  const page = readFileSync(join(packageRoot, 'docs', 'app-definitions.md'), 'utf8');
  const blocks = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!);

  it('shows definitions that parse: the example of an app whose logins are roles, and the first-login keys in a file', () => {
    const ledger = parseAppDefinition(blocks.find((block) => block.startsWith('name: ledger\n'))!);
    expect(ledger.containers.map((each) => each.name)).toEqual(['database', 'ledger']);
    expect(ledger.commands.snapshot?.command.slice(0, 2)).toEqual(['sh', '-c']);
    expect(ledger.commands.restore?.command[2]).toBe('grep -v -E "^(CREATE|ALTER) ROLE $PGUSER[ ;]" roles.sql | psql --set=ON_ERROR_STOP=1 --quiet ' +
      '&& pg_restore --create --exit-on-error --dbname=postgres company.dump');
    expect(ledger.initialCredentials?.fields).toEqual({ company: [{ text: 'books' }] });
    const firstLogin = blocks.find((block) => block.includes('initial-credentials:') && !block.includes('services:'))!;
    const withFirstLogin = parseAppDefinition(`${MINIMAL.replace(/x-teaminfra:\n  web: web\n/, '')}${firstLogin.replace('x-teaminfra:\n', 'x-teaminfra:\n  web: web\n')}`);
    expect(Object.keys(withFirstLogin.initialCredentials!.fields)).toEqual(['company', 'database']);
  });
});

describe('renderEnvironment', () => {
  it('fills in the variables as they are, quotes and spaces included, and refuses a missing one', () => {
    const database = bundledApp('tryton')!.containers.find((each) => each.name === 'tryton')!;
    const values = { DB_PASSWORD: `p'a ss"@`, ADMIN_PASSWORD: 'admin pw', TEAMINFRA_SMTP_URI: '' };
    expect(renderEnvironment(database, values)).toEqual([
      `TRYTOND_DATABASE__URI=postgresql://tryton:p'a ss"@@database:5432/`, 'TEAMINFRA_ADMIN_PASSWORD=admin pw',
      'TRYTOND_EMAIL__URI=', 'TRYTOND_EMAIL__FROM=tryton@localhost',
    ]);
    expect(() => renderEnvironment(database, { DB_PASSWORD: 'x' })).toThrow('No value for ${ADMIN_PASSWORD}');
  });
});

describe('smtpUri', () => {
  it('percent-encodes the login so any password stays one password, and is empty without a relay', () => {
    expect(smtpUri({ host: 'host.docker.internal', port: 2525, user: 'copy+1@x', password: 'p@ss:w+rd/ é' }))
      .toBe('smtp://copy%2B1%40x:p%40ss%3Aw%2Brd%2F%20%C3%A9@host.docker.internal:2525');
    expect(smtpUri({ host: '::1', port: 25 })).toBe('smtp://[::1]:25');
    expect(smtpUri(null)).toBe('');
  });
});
