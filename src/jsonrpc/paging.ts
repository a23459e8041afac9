type Page = Record<string, unknown>;

/**
 * Walks a paginated list (tools/list, resources/list, …) page by page: the one paging loop. Stops at
 * the last page (no string nextCursor) or after maxPages, so a server that keeps handing out cursors
 * cannot keep the gateway listing forever. A failing page rejects, leaving the pages already seen seen.
 */
export async function forEachPage(list: (cursor: string | undefined) => Promise<Page>, onPage: (page: Page) => void, maxPages: number): Promise<void> {
  let cursor: string | undefined;
  for (let n = 0; n < maxPages; n++) {
    const page = await list(cursor);
    onPage(page);
    cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
    if (cursor === undefined) return;
  }
}

/** The params of a list request for one page: only the cursor, or none for the first page. */
export function pageParams(cursor: string | undefined): { cursor: string } | undefined {
  return cursor === undefined ? undefined : { cursor };
}
