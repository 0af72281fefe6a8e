import type * as grpc from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";

/** The name that stands for the whole server in grpc.health.v1 (the empty string). */
export const OVERALL_HEALTH = "";

/**
 * grpc.health.v1.Health (Check, Watch, List; grpc-health-check 2.1) for the whole server
 * and the services it names. All of them flip together: the server serves A2A or it does not.
 */
export class HealthService {
  readonly #implementation: HealthImplementation;
  readonly #services: readonly string[];
  #status: ServingStatus;

  constructor(services: readonly string[], initial: ServingStatus) {
    this.#services = [OVERALL_HEALTH, ...services];
    this.#status = initial;
    this.#implementation = new HealthImplementation(Object.fromEntries(this.#services.map((s) => [s, initial])));
  }

  get status(): ServingStatus {
    return this.#status;
  }

  /** Sets every service's status; Watch streams get the change at once. */
  setServing(serving: boolean): void {
    this.#status = serving ? "SERVING" : "NOT_SERVING";
    for (const service of this.#services) this.#implementation.setStatus(service, this.#status);
  }

  addToServer(server: Pick<grpc.Server, "addService">): void {
    this.#implementation.addToServer(server);
  }
}
