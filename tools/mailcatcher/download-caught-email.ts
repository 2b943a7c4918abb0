import { z } from 'zod';
import { defineCapability, type CapabilityContext, type FileSource } from '../../src/core/capability.js';
import { downloadLink, DownloadView } from '../downloads.js';
import { EmailId } from '../schemas.js';
import { caughtEmailPath } from '../../src/http/file-contents.js';

/** Kept in the database, so any node serves it; an email kept by an earlier version is its file. */
function rawFile(context: CapabilityContext): FileSource {
  const email = context.target as { id: string; raw_path: string; size_bytes: number };
  return {
    path: email.raw_path === '' ? caughtEmailPath(email.id) : email.raw_path,
    filename: `${email.id}.eml`, contentType: 'message/rfc822', sizeBytes: email.size_bytes, sha256: null,
  };
}

export default defineCapability({
  name: 'download_caught_email',
  title: 'Download a caught email',
  description: 'The caught email as sent (.eml); over MCP a single-use link for 5 minutes.',
  permission: 'mailcatcher:read',
  target: { kind: 'email', from: 'email_id' },
  input: () => z.strictObject({ email_id: EmailId() }),
  output: DownloadView,
  http: { method: 'GET', path: '/api/emails/{email_id}/raw', status: 200, produces: 'message/rfc822' },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  // An email may hold a reset link: each read is a row of the activity trail (over MCP, the link's use).
  recordedRead: true,
  run: async ({ email_id: emailId }, context) =>
    downloadLink(context, rawFile(context), { action: 'download_caught_email', target: { type: 'email', id: emailId } }),
  download: async (_input, context) => rawFile(context),
});
