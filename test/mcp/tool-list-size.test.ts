// tools/list lands in an assistant's context window before its first question, in every
// conversation: for a full-access token it must stay within 24 KB (issue 26) with every tool of
// the catalog, in both eras (the 2025-era list also marks long actions' task support, +0.4 KB).
//
// It was 28.3 KB (28.7 KB in the 2025 era) for these 35 tools; 23.6 KB (24.0 KB) now, met by
// (src/mcp/README.md, "A lean tool list"): descriptions that say what a tool does and when, in as
// few words as that takes, and input fields described only where the name and bounds do not say
// it (-2.1 KB); an output schema's repeated nullable field written once under $defs (-0.4 KB); a
// long vocabulary (a service's states) declared by the first answer that has it (-0.1 KB); and,
// since no cut that keeps what a model reads got under 24 KB, two that a model does not read:
// `additionalProperties: false` left out of input schemas (-1 KB; an unknown argument is still
// refused with a sentence) and `openWorldHint: false` left out of annotations (-0.7 KB; a client
// reads the default, an open world). Titles, output schemas, enums, bounds, defaults, required
// lists and the anyOf form of nullable fields stay.
//
// With 38 tools (three added, fields grown) it was 27,355 bytes (27,784 in the 2025 era); 24,104
// (24,533) now, met by: a large nested piece an earlier answer declared (a service's domains, a
// mail relay) given by its type alone (-0.7 KB); below the root, no `type` where `properties` or
// `items` says it (-0.6 KB); a summary (a write's operation, a page's items) naming its members
// without their types, which the reading tool declares (-1.4 KB); shorter descriptions (-0.5 KB);
// no empty annotations.
//
// With 40 tools (move_erp_service and rollback_erp_service_move added) it was 25,131 bytes (25,638
// in the 2025 era); 24,016 (24,523), then 24,066 (24,573) with get_backup's restore drill fields, a move's dns_change and shorter descriptions, met by: a page's next_cursor declared by the first page
// only, and a write's whole answer an earlier tool declared named by its members (-0.6 KB);
// shorter descriptions and titles (-0.5 KB).
import { describe, expect, it } from 'vitest';
import { buildToolCatalog } from '../../src/mcp/tool-definitions.js';
import { catalog } from '../../tools/index.js';

const BOUND_BYTES = 24 * 1024;
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('the tools/list answer of a full-access token', () => {
  const definitions = buildToolCatalog(catalog).definitions;

  for (const era of ['legacy', 'modern'] as const) {
    it(`stays within ${BOUND_BYTES} bytes with every tool of the catalog (${era} era)`, () => {
      const tools = definitions.map((definition) => (era === 'legacy' ? definition.legacyTool : definition.tool));
      const total = bytesOf({ tools });
      const perTool = tools.map((tool) => ({ tool: tool.name, bytes: bytesOf(tool) })).sort((a, b) => b.bytes - a.bytes)
        .map(({ tool, bytes }) => `${tool} ${bytes}`).join(', ');
      expect(total, `tools/list is ${total} bytes for ${tools.length} tools, over ${BOUND_BYTES}; per tool: ${perTool}`)
        .toBeLessThanOrEqual(BOUND_BYTES);
    });
  }

  it('counts every tool of the catalog, so a new tool is measured the day it is added', () => {
    expect(definitions.map((definition) => definition.tool.name)).toEqual(catalog.map((capability) => capability.name));
  });
});
