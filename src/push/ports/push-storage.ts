import type { TaskRepository } from "../../lifecycle/index.js";
import type { PushConfigStore } from "./push-config-store.js";
import type { PushOutbox } from "./push-outbox.js";

/** What a store keeps of push beside its tasks: the configs and the outbox of deliveries owed. */
export type PushStorage = PushConfigStore & PushOutbox;

/**
 * A task repository that may keep push configs and the outbox of pending deliveries beside its
 * tasks, in the same commits as the task writes. Every store of this server is one; the
 * lifecycle core only knows TaskRepository.
 */
export interface PushCapableRepository extends TaskRepository {
  readonly push?: PushStorage;
}
