import type { TaskRepository } from "../../src/lifecycle/ports/task-repository.js";

/**
 * A store that answers every call with a promise, on a later event-loop turn, as a networked
 * store (PostgreSQL) answers: the lifecycle's other path (see src/lifecycle/ports/answer.ts), run on a
 * local store.
 */
export function asyncOnly(repository: TaskRepository, overrides: Partial<TaskRepository> = {}): TaskRepository {
  return {
    create: (scope, task, handOver) => later(() => repository.create(scope, task, handOver)),
    get: (scope, id, options) => later(() => repository.get(scope, id, options)),
    update: (scope, id, version, change) => later(() => repository.update(scope, id, version, change)),
    list: (scope, query) => later(() => repository.list(scope, query)),
    listActive: () => later(() => repository.listActive()),
    purgeTerminalBefore: (micros) => later(() => repository.purgeTerminalBefore(micros)),
    close: () => repository.close(),
    ...overrides,
  };
}

/** `run`'s answer, handed over on a later turn (after I/O, as a socket's reply would come). */
function later<T>(run: () => T | Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => setImmediate(() => Promise.resolve(run()).then(resolve, reject)));
}
