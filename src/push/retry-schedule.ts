/**
 * When a failed delivery is tried again, and when it is given up (rulings ).
 * Exponential backoff with jitter: attempt n waits a random time between half and all of
 * min(base * 2^(n-1), max), so receivers that failed together do not get retried together;
 * a `Retry-After` the receiver sent is waited for at least. Bounded by attempts and by age.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  /** Wait after the first failed attempt (before jitter), ms. */
  readonly backoffMs: number;
  /** Longest wait between two attempts, ms. */
  readonly maxBackoffMs: number;
  /** An event older than this (since its commit) is given up instead of tried again, ms. */
  readonly maxAgeMs: number;
}

/** What an HTTP answer means for the delivery. */
export type AnswerVerdict = "delivered" | "retry" | "give-up" | "remove";

/** 2xx delivered; 410 removes the config; 408, 429, 5xx and 3xx (never followed: a failed attempt) retried; other 4xx given up. */
export function verdictOf(status: number): AnswerVerdict {
  if (status >= 200 && status < 300) return "delivered";
  if (status === 410) return "remove";
  if (status === 408 || status === 429 || status >= 500 || (status >= 300 && status < 400)) return "retry";
  return "give-up";
}

/**
 * The wait before attempt `failed + 1`, or undefined when the delivery must be given up: no
 * attempts left, or the event would be older than `maxAgeMs` by then.
 */
export function nextAttemptDelay(
  policy: RetryPolicy,
  failed: number,
  ageMs: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (failed >= policy.maxAttempts) return undefined;
  const ceiling = Math.min(policy.backoffMs * 2 ** Math.min(failed - 1, 30), policy.maxBackoffMs);
  const jittered = ceiling / 2 + random() * (ceiling / 2);
  const delay = Math.max(jittered, retryAfterMs ?? 0);
  if (ageMs + delay > policy.maxAgeMs) return undefined;
  return Math.round(delay);
}

/** `Retry-After` in ms: delta seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === "") return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
