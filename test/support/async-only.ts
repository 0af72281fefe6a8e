import type { TaskRepository } from "../../src/lifecycle/task-repository.js";

/**
 * A store seen as the primary contract describes it: the async methods only (no `immediate`
 * face), each answered on a later event-loop turn as a networked store (PostgreSQL) answers.
 * What a store's synchronous face offers is an optimisation; code and contract tests that pass
 * through this wrapper do not depend on it.
 */
export function asyncOnly(repository: TaskRepository, overrides: Partial<TaskRepository> = {}): TaskRepository {
  return {
    create: (scope, task) => later(() => repository.create(scope, task)),
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
function later<T>(run: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => setImmediate(() => run().then(resolve, reject)));
}
