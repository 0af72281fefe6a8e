/** Bounds on client-chosen values (R-SEC-5: bound request complexity). */
export interface ValidationLimits {
  /** Longest accepted id (message_id, task_id, context_id, tenant, config id...), in characters. */
  maxIdLength: number;
  /** Most entries accepted in message.reference_task_ids. */
  maxReferenceTaskIds: number;
  /** Longest accepted Part.filename, in characters. */
  maxFilenameLength: number;
}

export const DEFAULT_VALIDATION_LIMITS: Readonly<ValidationLimits> = Object.freeze({
  maxIdLength: 256,
  maxReferenceTaskIds: 64,
  maxFilenameLength: 1024,
});
