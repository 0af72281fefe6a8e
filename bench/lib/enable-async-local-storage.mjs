// Preloaded (--import) into a metrics-off server by `bench -- observability --kinds=als`: one
// AsyncLocalStorage holding a store from the start, so Node's async hooks run on every promise and
// resource as they do once tracing's context manager is in use, with no tracing at all.
import { AsyncLocalStorage } from "node:async_hooks";

globalThis.benchAsyncLocalStorage = new AsyncLocalStorage();
globalThis.benchAsyncLocalStorage.enterWith({ bench: true });
