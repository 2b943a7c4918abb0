// The operator command line's contract (DESIGN.md), as printed by `teaminfra help`.
export const USAGE = `Usage:
  teaminfra serve [--data-dir DIR] [--port N] [--host H] [--demo] [--node NAME]
                                                                REST + MCP HTTP + panel + docs
  teaminfra mcp   [--data-dir DIR]                              MCP over stdio, token from TEAMINFRA_TOKEN
  teaminfra admin create-team   --name N [--plan free|starter|business|enterprise] [--timezone TZ]
  teaminfra admin set-plan      --team ID --plan P
  teaminfra admin add-member    --team ID --email E --role owner|admin|member [--password-stdin]
  teaminfra admin create-server --team ID --name N
  teaminfra admin create-service --team ID --server ID --name N
  teaminfra admin create-token  --team ID --name N [--accepted-by api|mcp|both]
                                [--permissions p1,p2 | --full-access] [--services id,..]
                                [--servers id,..] [--expires-on YYYY-MM-DD] [--created-by EMAIL]
                                [--needs-approval stop_erp_service,restore_backup,..]
  teaminfra admin set-backup-retention --team ID [--keep-manual N|default] [--keep-safety N|default]
  teaminfra admin set-backup-schedule-default --team ID [--frequency off|hourly|daily] [--time HH:MM]
                                [--keep-daily N] [--keep-weekly N] [--keep-monthly N]
  teaminfra admin set-row-retention [--audit-days N|default] [--webhook-days N|default] [--operation-days N|default]
  teaminfra admin remove-member --team ID --email E
  teaminfra admin create-webhook --team ID --url URL [--events t1,t2] [--allow-private]
  teaminfra admin create-server --team ID --name N --docker-host URL [--image IMAGE]     a Docker server
  teaminfra admin build-erp-image [--docker-host URL]
  teaminfra admin set-server-image  --server ID --image IMAGE
  teaminfra admin set-server-limits --server ID [--memory-mb N|default] [--cpus N|default]
  teaminfra admin add-app       --file app.yml [--name N] [--replace]   an app definition (a Compose file)
  teaminfra admin list-apps                                      the bundled apps and the added ones
  teaminfra admin build-app-images --app NAME [--docker-host URL]  builds the app's images offline
  teaminfra admin build-proxy-image [--docker-host URL]         builds the proxy image (Debian's Caddy) offline
  teaminfra admin set-server-domain --server ID --domain D       services answer at https://<name>.D
  teaminfra admin set-server-proxy  --server ID [--http-port N] [--https-port N]   the proxy's ports (80, 443)
  teaminfra admin set-server-certificate --server ID --certificate-file F --key-file F | --remove   instead of ACME's
  teaminfra admin set-registry-credentials --server ID --registry HOST[:PORT] --username U --password-file F | --remove
  teaminfra admin set-backup-destination --team T --endpoint URL --region R --bucket B [--prefix P]
                  --access-key-id K --secret-access-key-file F [--allow-private]   a team's off-site backups
  teaminfra admin mark-server-lost --server ID   a server gone for good: its services are recovered elsewhere (recover_erp_service)
  teaminfra admin run-restore-drill --team T     restores each service's newest off-site backup into a throwaway service now
  teaminfra admin set-outgoing-mail --service ID --host H --port P [--user U --password-stdin] [--allow-private] | --none
  teaminfra admin set-notification-mail --relay smtp://HOST:PORT [--from ADDRESS]  the relay of the emails about incidents

Every command above takes --data-dir DIR (default ./data) and --database-url URL (or DATABASE_URL).
Each admin command prints one JSON object.

As a client of a running server (the token from "login", or TEAMINFRA_TOKEN with TEAMINFRA_URL):
  teaminfra login --url BASE                 sign in: approve the code shown in the panel (owner or admin)
  teaminfra logout                           revoke the login's token and forget it
  teaminfra services list [--json]
  teaminfra services start SERVICE_ID [--no-wait] [--json]`;

/** A mistake in how the command was called: exit code 2 and a sentence on stderr. */
export class UsageError extends Error {}
