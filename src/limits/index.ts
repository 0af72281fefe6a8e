/**
 * Limits per principal and for the whole server (README "Limits"): request rate (token bucket),
 * open streams and agent runs (per principal, and a global cap on runs). Over a limit the caller
 * gets RESOURCE_EXHAUSTED with a google.rpc.RetryInfo (LimitExceededError in the core's errors).
 * Memory follows what is running, not how many principals ever called.
 */
export { AUTH_FAILURE_BURST_SECONDS, AUTHENTICATED_DEFAULT_LIMITS, DEFAULT_LIMITS, loadLimitsConfig, type LimitsConfig } from "./limits-config.js";
export { RateLimiter } from "./rate-limiter.js";
export { ConcurrencyLimiter } from "./concurrency-limiter.js";
export { RunLimiter } from "./run-limiter.js";
export { TaskQuota } from "./task-quota.js";
