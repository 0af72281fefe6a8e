import { setting, type Setting } from "../settings/setting.js";

/** The limits settings: per-principal rates, runs, streams, stored tasks, failed authentication, request value bounds; parsed by limits-config.ts. */
export const LIMITS_SETTINGS = {
  limitRate: setting(
    "A2A_LIMIT_RATE",
    "limit-rate",
    "100 with A2A_AUTH set, else 50000",
    "Requests per second each principal may make (token bucket; 0 = no limit).",
  ),
  limitBurst: setting(
    "A2A_LIMIT_BURST",
    "limit-burst",
    "200 with A2A_AUTH set, else 100000 (2 × A2A_LIMIT_RATE when that is set)",
    "Requests a principal may make at once before the rate applies.",
  ),
  limitRunsPerPrincipal: setting(
    "A2A_LIMIT_RUNS_PER_PRINCIPAL",
    "limit-runs-per-principal",
    "32 with A2A_AUTH set, else 10000",
    "Agent runs one principal may have going at once (0 = no limit).",
  ),
  limitRuns: setting("A2A_LIMIT_RUNS", "limit-runs", "50000", "Agent runs the whole server may have going at once (0 = no limit)."),
  limitStreamsPerPrincipal: setting(
    "A2A_LIMIT_STREAMS_PER_PRINCIPAL",
    "limit-streams-per-principal",
    "32 with A2A_AUTH set, else 10000",
    "Open SendStreamingMessage and SubscribeToTask streams per principal (0 = no limit).",
  ),
  limitTasksPerPrincipal: setting(
    "A2A_LIMIT_TASKS_PER_PRINCIPAL",
    "limit-tasks-per-principal",
    "0 (no quota)",
    "Tasks one principal may have stored; a SendMessage that would create one more is RESOURCE_EXHAUSTED (0 = no quota).",
  ),
  authFailureRate: setting(
    "A2A_AUTH_FAILURE_RATE",
    "auth-failure-rate",
    "10",
    "Refused credentials per second per client address (token bucket, 5 seconds' worth at once); an address over it gets RESOURCE_EXHAUSTED before its credential is checked (0 = no limit).",
  ),
  maxStructEntries: setting(
    "A2A_MAX_STRUCT_ENTRIES",
    "max-struct-entries",
    "10000",
    "Most entries in one Struct (metadata, data part) or list of a request; more is INVALID_ARGUMENT naming the field.",
  ),
  maxStructDepth: setting(
    "A2A_MAX_STRUCT_DEPTH",
    "max-struct-depth",
    "32",
    "Deepest nesting of Structs and lists in a request value; deeper is INVALID_ARGUMENT naming the field.",
  ),
} as const satisfies Record<string, Setting>;
