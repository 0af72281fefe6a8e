import { AsyncLocalStorage } from "node:async_hooks";
import { ROOT_CONTEXT, type Context, type ContextManager } from "@opentelemetry/api";

/**
 * OpenTelemetry's active context, kept in an AsyncLocalStorage this module owns. Why our own and
 * not the SDK's: the agent run's diagnostics channel binds a store (`bindStore`) so that the agent
 * runs with its run's span current, and binding needs the storage itself, which the SDK's context
 * manager keeps private. Functions are bound; nothing here patches event emitters (no
 * instrumentation library that would need it is loaded).
 */
export class AsyncContextManager implements ContextManager {
  readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const target = thisArg === undefined ? fn : (fn.bind(thisArg) as F);
    return this.storage.run(context, target, ...args);
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== "function") return target;
    const manager = this;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return function (this: unknown, ...args: unknown[]) {
      return manager.storage.run(context, () => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
