/**
 * Why a call was not let in, as a value: made where the failure is found, turned into a gRPC
 * status in src/protocol/error-status.ts (UNAUTHENTICATED, PERMISSION_DENIED or UNAVAILABLE, with
 * a google.rpc.ErrorInfo). Messages say what the server expects; they never quote a credential.
 */

/** ErrorInfo.domain of authentication and authorization failures (they are not A2A errors). */
export const AUTH_ERROR_DOMAIN = "auth.a2a-grpc-server";

export type AuthFailureKind =
  /** No credential, or one that does not prove anything: UNAUTHENTICATED. */
  | "unauthenticated"
  /** A valid credential that may not do this: PERMISSION_DENIED. */
  | "permission_denied"
  /** The server could not check the credential (signing keys unreachable): UNAVAILABLE. */
  | "unavailable";

export class AuthError extends Error {
  constructor(
    readonly kind: AuthFailureKind,
    /** ErrorInfo.reason, UPPER_SNAKE_CASE. */
    readonly reason: string,
    message: string,
    /** ErrorInfo.metadata (snake_case keys, A-23); server-side facts only, never client input. */
    readonly metadata: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = "AuthError";
  }
}

/** A credential of a scheme was sent but does not verify. */
export function invalidCredential(scheme: string, why: string, expected: string): AuthError {
  return new AuthError("unauthenticated", "CREDENTIALS_INVALID", `${scheme} credential refused: ${why}; expected ${expected}`, { scheme });
}
