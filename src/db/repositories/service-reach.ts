// The rule a row about an optional ERP service (an operation, a decision) follows for a token
// limited to specific services: the row is about no service, about a listed one, or about a copy
// of a listed one. One expression, so that operations and decisions cannot drift apart.
import type { Expression, ExpressionBuilder, ReferenceExpression, SqlBool } from 'kysely';
import type { Database } from '../tables.js';

export function serviceInListedReach<DB extends Database, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>, serviceColumn: ReferenceExpression<DB, TB>, tokenId: string,
): Expression<SqlBool> {
  // Kysely cannot type selectFrom on a builder generic in its tables; the two subqueries read
  // tables every DB here has, and their one column is compared with the caller's column.
  const base = eb as unknown as ExpressionBuilder<Database, never>;
  const listed = base.selectFrom('api_token_services').select('service_id').where('token_id', '=', tokenId);
  const copiesOfListed = base.selectFrom('erp_services').select('id').where('parent_id', 'in', listed);
  return eb.or([eb(serviceColumn, 'is', null), eb(serviceColumn, 'in', listed as never), eb(serviceColumn, 'in', copiesOfListed as never)]);
}
