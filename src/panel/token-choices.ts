// What a token's access can be narrowed to: the team's ERP services (with how many copies each
// has) and its servers, for the settings forms.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { Choices } from './token-form.js';

export async function tokenChoices(db: Kysely<Database>, teamId: string): Promise<Choices> {
  const services = await db.selectFrom('erp_services').select(['id', 'name', 'parent_id']).where('team_id', '=', teamId)
    .where('deleted_at', 'is', null).orderBy('id').execute();
  const servers = await db.selectFrom('servers').select(['id', 'name']).where('team_id', '=', teamId)
    .where('deleted_at', 'is', null).orderBy('id').execute();
  return {
    services: services.filter((service) => service.parent_id === null)
      .map((service) => ({ id: service.id, name: service.name, copies: services.filter((copy) => copy.parent_id === service.id).length })),
    servers,
  };
}
