import { InvalidRequestError, type FieldViolation } from "../../lifecycle/errors.js";

/**
 * Collects every problem of one request, so a client fixes them all in one round trip
 * instead of discovering them one error at a time.
 */
export class Violations {
  private readonly found: FieldViolation[] = [];

  add(field: string, description: string): void {
    this.found.push({ field, description });
  }

  get count(): number {
    return this.found.length;
  }

  /** Throws one InvalidRequestError naming all fields found so far (R-SEND-8, R-ERR-5). */
  throwIfAny(): void {
    if (this.found.length > 0) throw new InvalidRequestError([...this.found]);
  }
}
