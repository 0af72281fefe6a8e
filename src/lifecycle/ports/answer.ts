/**
 * What a store answers: the value itself when it has it within the call (memory, SQLite), or a
 * promise of it (a networked store). A refusal is always a rejected promise, never a throw, so
 * callers handle refusals one way whatever the store.
 */
export type Answer<T> = T | Promise<T>;

/**
 * `onValue(value)` at once when `answer` is a value, else once its promise resolves; a rejection
 * passes through. Why not `await`: an await costs a promise and a microtask even for a value, and
 * the hot paths (a task's writes, SendMessage's reply) answer within the call on the local stores.
 */
export function whenAnswered<T, R>(answer: Answer<T>, onValue: (value: T) => R | Promise<R>): R | Promise<R> {
  return answer instanceof Promise ? answer.then(onValue) : onValue(answer);
}
