/** `Workbench.list()`'s listing: the executions over every page of `listPage()`. */

import type { Workbench } from "./client.js";
import type { Execution, ExecutionList, ListOptions } from "./types.js";

/** `list()`: the executions over every page (newest first); `pages()` for the pages themselves. */
export class ExecutionListing implements AsyncIterable<Execution> {
  constructor(
    private readonly client: Workbench,
    private readonly options: ListOptions,
  ) {}

  /** The pages of the listing, one request each. */
  async *pages(): AsyncGenerator<ExecutionList, void, undefined> {
    const { limit, pageSize = 50, status, kind, sessionId, batchId, signal } = this.options;
    let left = limit ?? Number.POSITIVE_INFINITY;
    let cursor: string | null = null;
    while (left > 0) {
      const page: ExecutionList = await this.client.listPage({
        status,
        kind,
        sessionId,
        batchId,
        signal,
        cursor,
        limit: Math.min(pageSize, 1000, left),
      });
      if (page.executions.length > left) page.executions = page.executions.slice(0, left);
      left -= page.executions.length;
      yield page;
      cursor = page.nextCursor ?? null;
      if (cursor === null || page.executions.length === 0) return;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Execution, void, undefined> {
    for await (const page of this.pages()) yield* page.executions;
  }

  /** Every execution of the listing in one array. */
  async toArray(): Promise<Execution[]> {
    const out: Execution[] = [];
    for await (const execution of this) out.push(execution);
    return out;
  }
}
