// Preloaded (--import) into a server by `bench -- call-promises`: counts the promises the process
// makes (V8's promise init hook) and answers the benchmark's { countPromises: true } message over
// the IPC channel with the count so far.
import { promiseHooks } from "node:v8";

let promises = 0;
promiseHooks.onInit(() => {
  promises++;
});
process.on("message", (message) => {
  if (message !== null && typeof message === "object" && message.countPromises === true) process.send?.({ promises });
});
