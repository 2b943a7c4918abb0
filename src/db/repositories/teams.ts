// Teams, users and memberships, as the operator command line and the panel need them.
import type { Kysely } from 'kysely';
import type { Database, Plan, Role } from '../tables.js';
import { newId, nowIso } from '../ids.js';

export async function insertTeam(db: Kysely<Database>, values: { name: string; plan: Plan; timezone: string }): Promise<string> {
  const id = newId('team');
  await db.insertInto('teams').values({ id, ...values, created_at: nowIso() }).execute();
  return id;
}

export async function findTeam(db: Kysely<Database>, teamId: string) {
  return db.selectFrom('teams').selectAll().where('id', '=', teamId).executeTakeFirst();
}

export async function setTeamPlan(db: Kysely<Database>, teamId: string, plan: Plan): Promise<void> {
  await db.updateTable('teams').set({ plan }).where('id', '=', teamId).execute();
}

export async function findUserByEmail(db: Kysely<Database>, email: string) {
  return db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
}

/** Adds (or re-adds) a member; creates the user when the email is new. */
export async function upsertMember(
  db: Kysely<Database>,
  values: { teamId: string; email: string; role: Role; passwordHash: string | null },
): Promise<string> {
  const email = values.email.toLowerCase();
  return db.transaction().execute(async (trx) => {
    let user = await findUserByEmail(trx, email);
    if (!user) {
      const id = newId('usr');
      await trx.insertInto('users').values({ id, email, password_hash: values.passwordHash, created_at: nowIso(), last_sign_in_at: null }).execute();
      user = { id, email, password_hash: values.passwordHash, created_at: nowIso(), last_sign_in_at: null };
    } else if (values.passwordHash) {
      await trx.updateTable('users').set({ password_hash: values.passwordHash }).where('id', '=', user.id).execute();
    }
    await trx.insertInto('memberships')
      .values({ team_id: values.teamId, user_id: user.id, role: values.role, created_at: nowIso(), removed_at: null })
      .onConflict((conflict) => conflict.columns(['team_id', 'user_id']).doUpdateSet({ role: values.role, removed_at: null }))
      .execute();
    return user.id;
  });
}

export async function findActiveMember(db: Kysely<Database>, teamId: string, email: string) {
  return db.selectFrom('memberships as m').innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id as user_id', 'u.email', 'm.role'])
    .where('m.team_id', '=', teamId).where('u.email', '=', email.toLowerCase()).where('m.removed_at', 'is', null)
    .executeTakeFirst();
}
