// Limits of the mail catcher, documented in docs/rest-api.md. Operators change them by environment.
export interface MailConfig {
  host: string;
  /** 0 picks a free port (tests); `serve` uses TEAMINFRA_SMTP_PORT or 2525. */
  port: number;
  /** Largest message accepted; a larger one is refused at SMTP level (552) and nothing is kept. */
  maxMessageBytes: number;
  /** Emails kept per copy; the oldest are deleted beyond this. */
  maxEmailsPerCopy: number;
  /** "host:port" where every Docker engine's containers reach the catcher; absent: found per engine (container-mail-address.ts). */
  addressForContainers?: string | undefined;
}

export function mailConfigFromEnv(env: NodeJS.ProcessEnv = process.env): MailConfig {
  const number = (value: string | undefined, fallback: number) => (value && /^\d+$/.test(value) ? Number(value) : fallback);
  return {
    // Loopback; containers of this machine's Docker engine reach it on their bridge's gateway,
    // where it also listens then (container-mail-address.ts). Every copy logs in with its own login.
    host: env.TEAMINFRA_SMTP_HOST || '127.0.0.1',
    port: number(env.TEAMINFRA_SMTP_PORT, 2525),
    maxMessageBytes: number(env.TEAMINFRA_MAIL_MAX_BYTES, 10 * 1024 * 1024),
    maxEmailsPerCopy: number(env.TEAMINFRA_MAIL_MAX_PER_COPY, 500),
    addressForContainers: env.TEAMINFRA_SMTP_ADDRESS_FOR_CONTAINERS || undefined,
  };
}
