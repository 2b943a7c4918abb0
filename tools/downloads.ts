// The view of a file offered for download, with a short-lived link good for one download: what a channel
// that cannot stream bytes (MCP) receives. REST streams the same file from the same capability.
import { z } from 'zod';
import { builtOnce } from '../src/core/built-once.js';
import type { CapabilityContext, FileSource } from '../src/core/capability.js';
import type { Infer } from './schemas.js';
import { createDownloadLink } from '../src/db/repositories/download-links.js';

export const DownloadView = builtOnce(() => z.object({
  filename: z.string(),
  content_type: z.string(),
  size_bytes: z.number().int(),
  sha256: z.string().nullable(),
  download_url: z.string()
    .describe('Good for one download, starting within 5 minutes; HEAD does not use it up, and an interrupted download may ' +
      'resume with Range for 10 minutes after it started. A path when the server address is unknown.'),
  expires_at: z.string(),
}));

/** `read`: the tool and what it reads, as the link's use is recorded in the activity trail (src/http/download-links.ts). */
export async function downloadLink(
  context: CapabilityContext, file: FileSource, read: { action: string; target: { type: string; id: string } },
): Promise<Infer<typeof DownloadView>> {
  const asker = context.actor.tokenId !== undefined ? { tokenId: context.actor.tokenId } : { userId: context.actor.userId };
  const link = await createDownloadLink(context.db.kysely, context.reach.teamId, asker, file, {
    ...read, channel: context.actor.channel,
  });
  return {
    filename: file.filename, content_type: file.contentType, size_bytes: file.sizeBytes, sha256: file.sha256,
    download_url: (context.publicUrl ?? '') + link.path, expires_at: link.expiresAt,
  };
}
