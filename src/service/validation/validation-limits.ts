/** Bounds on client-chosen values (R-SEC-5: bound request complexity). */
export interface ValidationLimits {
  /** Longest accepted id (message_id, task_id, context_id, tenant, config id...), in characters. */
  maxIdLength: number;
  /** Most entries accepted in message.reference_task_ids. */
  maxReferenceTaskIds: number;
  /** Longest accepted Part.filename, in characters. */
  maxFilenameLength: number;
  /** Most entries in one Struct (JSON object) or list of a request: metadata, data parts. */
  maxStructEntries: number;
  /** Deepest nesting of Structs and lists in a request value (the value itself is depth 1). */
  maxStructDepth: number;
}

export const DEFAULT_VALIDATION_LIMITS: Readonly<ValidationLimits> = Object.freeze({
  maxIdLength: 256,
  maxReferenceTaskIds: 64,
  maxFilenameLength: 1024,
  maxStructEntries: 10_000,
  maxStructDepth: 32,
});
