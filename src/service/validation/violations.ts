import { InvalidRequestError, type FieldViolation } from "../../lifecycle/index.js";

/**
 * Collects every problem of one request, so a client fixes them all in one round trip
 * instead of discovering them one error at a time.
 */
export class Violations {
  /** At most this many are kept; the rest are only counted (A-34: a status lists at most 32). */
  static readonly KEPT = 32;
  private readonly found: FieldViolation[] = [];
  private omitted = 0;

  add(field: string, description: string): void {
    if (this.found.length < Violations.KEPT) this.found.push({ field, description });
    else this.omitted++;
  }

  get count(): number {
    return this.found.length + this.omitted;
  }

  /** Throws one InvalidRequestError naming the fields found so far (R-SEND-8, R-ERR-5), and how many more. */
  throwIfAny(): void {
    if (this.count > 0) throw new InvalidRequestError([...this.found], this.omitted);
  }
}
