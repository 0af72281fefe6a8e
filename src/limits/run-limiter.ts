import { type Caller, LimitExceededError, type RunAdmission } from "../lifecycle/index.js";
import { ConcurrencyLimiter } from "./concurrency-limiter.js";

/** The core's RunAdmission port: agent runs per principal and in all. */
export class RunLimiter implements RunAdmission {
  readonly #runs: ConcurrencyLimiter;

  constructor(perPrincipal: number, total: number) {
    this.#runs = new ConcurrencyLimiter(perPrincipal, total);
  }

  admit(caller: Caller): () => void {
    const principal = caller.principal;
    const taken = this.#runs.acquire(principal);
    if (taken === "total") throw new LimitExceededError("SERVER_BUSY", "the server is running as many agent runs as it allows; retry later", 1000);
    if (taken === "principal") {
      throw new LimitExceededError(
        "TOO_MANY_RUNS",
        `principal ${JSON.stringify(principal.slice(0, 64))} has as many agent runs going as it may; wait for one to finish`,
        1000,
      );
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#runs.release(principal);
    };
  }

  get running(): number {
    return this.#runs.running;
  }

  get principals(): number {
    return this.#runs.principals;
  }
}
