import type { CoreLogger } from "../ports/logger.js";
import type { TaskRepository } from "../ports/task-repository.js";

/**
 * Retention: removes terminal tasks (and their history) whose last status change is older
 * than `maxAgeMs`, so the store does not grow without bound. Runs every tenth of the age,
 * at most hourly and at least every minute. Off unless configured.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly repository: TaskRepository,
    private readonly maxAgeMs: number,
    private readonly logger: CoreLogger,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    const every = Math.min(Math.max(this.maxAgeMs / 10, 60_000), 3_600_000);
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
    void this.sweep();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One pass; returns how many tasks were removed. Overlapping passes share one run. */
  async sweep(): Promise<number> {
    if (this.running) {
      await this.running;
      return 0;
    }
    let removed = 0;
    this.running = (async () => {
      try {
        removed = await this.repository.purgeTerminalBefore((this.now() - this.maxAgeMs) * 1000);
        if (removed > 0) this.logger.info({ removed, max_age_ms: this.maxAgeMs }, "retention removed terminal tasks");
      } catch (error) {
        this.logger.error({ err: error }, "retention sweep failed");
      }
    })();
    await this.running;
    this.running = undefined;
    return removed;
  }
}
