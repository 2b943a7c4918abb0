// Cursor pagination in stable id order (ids are time-sortable). The cursor is the last id of
// the previous page, wrapped so clients treat it as opaque.
import { AppError } from '../core/errors.js';

export interface PageRequest {
  cursor?: string | undefined;
  limit: number;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const lastId = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z]+_[0-9a-z]{20}$/.test(lastId)) {
    throw new AppError('validation_failed', 'The cursor is not one this API returned; start again without it.', {
      errors: [{ field: 'cursor', message: 'Unknown cursor.' }],
    });
  }
  return lastId;
}

/** Rows were fetched with limit + 1: the extra row only says whether there is a next page. */
export function toPage<Row extends { id: string }, View>(rows: Row[], limit: number, view: (row: Row) => View): Page<View> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return { data: pageRows.map(view), next_cursor: hasMore && last ? encodeCursor(last.id) : null };
}
