import { statusMicros } from "../model/clock.js";
import type { TaskPage } from "../ports/task-repository.js";
import { ReplyTooLargeError, type TaskSizeLimits } from "../writes/task-size.js";

/** Room kept for the page's own fields (next_page_token, page_size, total_size) and framing. */
const PAGE_FIELDS_BYTES = 512;
/** Each task in the page: its field tag and a length of up to 5 bytes. */
const PER_TASK_FRAMING = 6;

/**
 * a ListTasks page is cut short when the next task would not fit in one reply; the cursor
 * then points at the last task kept, so the client's next page starts right after it and every
 * task is listed exactly once. Each task is measured with the edge's encoder (the static one,
 * several times cheaper than the reply's own encoding), stopping at the first that does not fit.
 * A first task that does not fit on its own is refused with ReplyTooLargeError: a page without
 * it would loop the client forever on the same token.
 */
export function fitToReply(page: TaskPage, limits: TaskSizeLimits): TaskPage {
  const budget = limits.maxResponseBytes - PAGE_FIELDS_BYTES;
  let used = 0;
  for (let i = 0; i < page.tasks.length; i++) {
    const task = page.tasks[i]!;
    const bytes = limits.measureTask(task) + PER_TASK_FRAMING;
    if (used + bytes <= budget) {
      used += bytes;
      continue;
    }
    if (i === 0) throw new ReplyTooLargeError(task.id, bytes, limits.maxResponseBytes);
    const last = page.tasks[i - 1]!;
    return { tasks: page.tasks.slice(0, i), next: { statusMicros: statusMicros(last), taskId: last.id }, totalSize: page.totalSize };
  }
  return page;
}
