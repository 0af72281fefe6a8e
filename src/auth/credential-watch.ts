/**
 * Open streams end when their credential does (issue 33 finding 7): at a JWT's exp, and when an
 * API key leaves the key file on a reload. The caller made by CallerAuthenticator carries the
 * credential's lifetime; a stream watches it for as long as it is open.
 */
import type { Caller } from "../lifecycle/index.js";
import { AuthError } from "./auth-error.js";
import type { Identity } from "./identity.js";

/** How long a credential holds: the part of an Identity a stream watches. */
export type CredentialLifetime = Pick<Identity, "expiresAtMs" | "revoked">;

/** A Caller proven by a credential (CallerAuthenticator), with that credential's lifetime. */
export interface AuthenticatedCaller extends Caller {
  readonly credential: CredentialLifetime;
}

/** setTimeout's longest delay; a later end is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `end` once, with an UNAUTHENTICATED AuthError, when the caller's credential expires or is
 * revoked; anonymous callers and credentials without an end are never ended. Returns the function
 * that stops watching (call it when the stream ends).
 */
export function watchCredential(caller: Caller, end: (error: AuthError) => void, now: () => number = Date.now): () => void {
  const credential = (caller as Partial<AuthenticatedCaller>).credential;
  if (credential === undefined) return () => {};
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const finish = (error: AuthError) => {
    if (done) return;
    stop();
    end(error);
  };
  const onRevoked = () =>
    finish(
      new AuthError(
        "unauthenticated",
        "CREDENTIALS_REVOKED",
        "the credential of this stream was withdrawn (its API key was removed); call again with a valid one",
        { scheme: caller.scheme ?? "" },
      ),
    );
  const expiresAtMs = credential.expiresAtMs;
  const arm = () => {
    if (expiresAtMs === undefined) return;
    const left = expiresAtMs - now();
    if (left <= 0) {
      finish(
        new AuthError("unauthenticated", "CREDENTIALS_EXPIRED", "the token of this stream has expired; call again with a fresh one", {
          scheme: caller.scheme ?? "",
        }),
      );
      return;
    }
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    timer.unref();
  };
  const stop = () => {
    done = true;
    if (timer !== undefined) clearTimeout(timer);
    credential.revoked?.removeEventListener("abort", onRevoked);
  };
  if (credential.revoked?.aborted) {
    onRevoked();
    return stop;
  }
  credential.revoked?.addEventListener("abort", onRevoked, { once: true });
  arm();
  return stop;
}
