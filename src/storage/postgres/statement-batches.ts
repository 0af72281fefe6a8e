/** How a StatementBatches sends its items: one alone, or several in one statement. */
export interface StatementBatchesOptions<T, R> {
  /** Statements in flight at most; the items that come meanwhile go together in the next. */
  readonly inFlight: number;
  /** Items in one statement at most. */
  readonly batchLimit: number;
  /** Items with the same key never share a statement (they go in order, one per statement). */
  readonly key: (item: T) => string;
  readonly one: (item: T) => Promise<R>;
  /** Several items in one statement: a result per item, in the order given. */
  readonly many: (items: T[]) => Promise<R[]>;
}

interface Queued<T, R> {
  readonly item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit for statements of one kind: an idle store sends an item at once, a busy one
 * sends fewer, larger statements (at most `inFlight` at a time; the items made meanwhile wait
 * and go together in the next). If a statement of several fails (an error of one of them, a
 * deadlock), each is sent again alone, so an error reaches only the item that caused it.
 */
export class StatementBatches<T, R> {
  private readonly queue: Queued<T, R>[] = [];
  private running = 0;
  private scheduled = false;

  constructor(private readonly options: StatementBatchesOptions<T, R>) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** In a microtask: the items added in the same turn go together. */
  private schedule(): void {
    if (this.scheduled || this.running >= this.options.inFlight || this.queue.length === 0) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.running < this.options.inFlight && this.queue.length > 0) {
      const batch = this.take();
      this.running++;
      void this.send(batch).finally(() => {
        this.running--;
        this.schedule();
      });
    }
  }

  /** The next statement's items: oldest first, one per key, at most batchLimit. */
  private take(): Queued<T, R>[] {
    const batch: Queued<T, R>[] = [];
    const keys = new Set<string>();
    for (let i = 0; i < this.queue.length && batch.length < this.options.batchLimit; ) {
      const queued = this.queue[i]!;
      const key = this.options.key(queued.item);
      if (keys.has(key)) {
        i++;
        continue;
      }
      keys.add(key);
      batch.push(queued);
      this.queue.splice(i, 1);
    }
    return batch;
  }

  private async send(batch: Queued<T, R>[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      await this.options.one(only!.item).then(only!.resolve, only!.reject);
      return;
    }
    let results: R[];
    try {
      results = await this.options.many(batch.map((q) => q.item));
    } catch {
      await Promise.all(batch.map((q) => this.options.one(q.item).then(q.resolve, q.reject)));
      return;
    }
    batch.forEach((q, i) => q.resolve(results[i]!));
  }
}
