// oidc-provider's storage, in our database (oauth_records). Two things beyond storage happen here,
// because this is the one place that sees every token the OAuth server saves or drops:
// - an AccessToken saved becomes (or renews) a team token (team-tokens.ts), before the token
//   endpoint answers, so the client's first request with it already works;
// - a Grant is found only while its team token is live, so a refresh after a revocation or an
//   expiry on the API Tokens page is refused.
// A client whose id is an https URL is not stored at all: its metadata document is fetched
// (client-metadata-fetcher.ts) and handed to the library as if it had been registered.
// Records whose id is a bearer secret are stored under its SHA-256, and the id (`jti`) is left
// out of the stored payload: the database never holds a usable code or token. One exception: a
// device code, because the code-entry page finds it by its user code and saves it again under
// the same id; it lives ten minutes, yields a token only after a person approved it, and once.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Database } from '../db/tables.js';
import { ClientMetadataRefusal, namesMetadataDocument } from './client-metadata-document.js';
import type { ClientMetadataFetcher } from './client-metadata-fetcher.js';
import { consumeRecord, deleteRecord, deleteRecordsOfGrant, findRecord, putRecord, sweepExpired, type OAuthRecord } from '../db/repositories/oauth-records.js';
import { findSignIn, PENDING_SIGN_IN_SECONDS } from './sign-ins.js';
import { grantIsLive, issueTeamToken, revokeTeamTokenOfGrant, revokeTeamTokenOfValue } from './team-tokens.js';

const SECRET_IDS = new Set([
  'AccessToken', 'AuthorizationCode', 'RefreshToken', 'ClientCredentials', 'InitialAccessToken',
  'RegistrationAccessToken', 'BackchannelAuthenticationRequest', 'Session',
]);

const SWEEP_INTERVAL_MS = 60_000;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export function databaseAdapter(db: Kysely<Database>, clientMetadata?: ClientMetadataFetcher) {
  let lastSweep = 0;

  return class DatabaseAdapter implements Adapter {
    private readonly secretIds: boolean;

    constructor(private readonly kind: string) {
      this.secretIds = SECRET_IDS.has(kind);
    }

    private key(id: string): string {
      return this.secretIds ? sha256(id) : id;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      if (this.kind === 'AccessToken') await issueTeamToken(db, id, payload.grantId);
      const { jti: _jti, ...withoutId } = payload;
      await putRecord(db, {
        kind: this.kind,
        id: this.key(id),
        payload: this.secretIds ? withoutId : payload,
        grantId: this.kind === 'Grant' ? id : payload.grantId ?? null,
        userCode: typeof payload.userCode === 'string' ? sha256(payload.userCode) : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        expiresInSeconds: await this.lifetime(id, expiresIn),
      });
      await this.sweepNowAndThen();
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.kind === 'Client' && clientMetadata && namesMetadataDocument(id)) return clientOfDocument(clientMetadata, id);
      const record = await findRecord(db, this.kind, { column: 'id', value: this.key(id) });
      if (!record) return undefined;
      if (this.kind === 'Grant' && !(await grantIsLive(db, id))) return undefined;
      return this.payloadOf(record, id);
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const record = await findRecord(db, this.kind, { column: 'user_code', value: sha256(userCode) });
      return record && this.payloadOf(record, record.id);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const record = await findRecord(db, this.kind, { column: 'uid', value: uid });
      // A session found by uid: its id (the cookie value) is not ours to give back, and is not needed.
      return record && this.payloadOf(record, this.secretIds ? undefined : record.id);
    }

    async consume(id: string): Promise<void> {
      await consumeRecord(db, this.kind, this.key(id));
    }

    async destroy(id: string): Promise<void> {
      if (this.kind === 'AccessToken') await revokeTeamTokenOfValue(db, id);
      await deleteRecord(db, this.kind, this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      if (this.kind === 'AccessToken') await revokeTeamTokenOfGrant(db, grantId);
      await deleteRecordsOfGrant(db, this.kind, grantId);
    }

    /** A grant lives as long as its team token; until the token exists, as long as its approval waits. */
    private async lifetime(id: string, expiresIn: number | undefined): Promise<number | undefined> {
      if (this.kind !== 'Grant') return expiresIn;
      return (await findSignIn(db, id))?.tokenId ? undefined : PENDING_SIGN_IN_SECONDS;
    }

    private payloadOf(record: OAuthRecord, id: string | undefined): AdapterPayload {
      return {
        ...(record.payload as AdapterPayload),
        ...(this.secretIds && id !== undefined ? { jti: id } : {}),
        ...(record.consumedAt ? { consumed: Math.floor(Date.parse(record.consumedAt) / 1000) } : {}),
      };
    }

    private async sweepNowAndThen(): Promise<void> {
      if (Date.now() - lastSweep < SWEEP_INTERVAL_MS) return;
      lastSweep = Date.now();
      await sweepExpired(db);
    }
  };
}

/** A client from its metadata document; a refused document is an error the person and the client can read. */
async function clientOfDocument(clientMetadata: ClientMetadataFetcher, clientId: string): Promise<AdapterPayload> {
  try {
    return await clientMetadata.find(clientId) as AdapterPayload;
  } catch (error) {
    if (!(error instanceof ClientMetadataRefusal)) throw error;
    throw new errors.InvalidClientMetadata(`The client's metadata document (${clientId.slice(0, 200)}) was refused: ${error.message}.`);
  }
}
