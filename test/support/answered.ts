import type { Answer } from "../../src/lifecycle/ports/answer.js";
import type { TaskRepository } from "../../src/lifecycle/ports/task-repository.js";

/**
 * The value a store answered within the call. Fails the test when the store answered with a
 * promise instead (a refusal, or a store that answers later): a test that drives a local store
 * turn by turn depends on its answers being there at once.
 */
export function answered<T>(answer: Answer<T>): T {
  if (answer instanceof Promise) {
    answer.catch(() => {});
    throw new Error("the store answered with a promise, not within the call");
  }
  return answer;
}

/** Resolves once every write the store answered so far is committed; rejects if they were lost. */
export function committed(repo: TaskRepository): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (repo.afterCommit === undefined) resolve();
    else repo.afterCommit((error) => (error === undefined ? resolve() : reject(error)));
  });
}

/**
 * `repo` with its creates and updates acknowledged once committed (afterCommit), as the lifecycle
 * acknowledges them to a client: for tests that check the file, another connection or a crash
 * against what was acknowledged. `now` is the store itself, answering within the call.
 */
export type Acked<R> = R & { readonly now: R };

export function ackedOnCommit<R extends TaskRepository>(repo: R): Acked<R> {
  return new Proxy(repo, {
    get(target, key) {
      if (key === "now") return target;
      if (key === "create" || key === "update") {
        return async (...args: unknown[]) => {
          const answer = await (target[key] as (...a: unknown[]) => unknown)(...args);
          await committed(target);
          return answer;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Acked<R>;
}
