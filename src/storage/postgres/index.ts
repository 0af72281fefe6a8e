/**
 * The PostgreSQL store: tasks for any number of replicas on one database, the event relay that
 * lets a stream on one replica follow a task run on another, and the run leases that keep one
 * replica per task; push configs and their delivery outbox, each lane delivered by one replica at
 * a time. `openPostgresStore` is all the app needs.
 */
export { openPostgresStore, DEFAULT_LEASE_MS, DEFAULT_POOL_SIZE, type PostgresStore, type PostgresStoreOptions } from "./postgres-store.js";
export { PostgresTaskRepository } from "./postgres-task-repository.js";
export { PostgresEventRelay } from "./event-relay.js";
export { PostgresRunLeases } from "./run-leases.js";
export { PostgresPushStore } from "./push-store.js";
export { PostgresStoreError } from "./postgres-store-error.js";
export { SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION } from "./migrations.js";
