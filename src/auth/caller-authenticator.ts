import type { Caller } from "../lifecycle/index.js";
import { AuthError } from "./auth-error.js";
import type { AuthenticatedCaller } from "./credential-watch.js";
import { ownerPrincipal, type Authenticator, type CredentialSource, type Identity } from "./identity.js";
import type { RpcScopes } from "./rpc-scopes.js";

/** How each scheme's credential travels, for messages that say what to send. */
export const CREDENTIAL_FORMS: Readonly<Record<Authenticator["scheme"], string>> = {
  jwt: "authorization: Bearer <JWT>",
  "api-key": "x-api-key: <key>",
  mtls: "a client certificate (mTLS)",
};

export interface CallerAuthenticatorOptions {
  /** Tried in order; the first that finds a credential of its scheme decides. */
  readonly authenticators: readonly Authenticator[];
  readonly rpcScopes: RpcScopes;
}

/**
 * Authentication and authorization of one A2A call, run at the edge right after the version
 * check (A-15): the first scheme whose credential the call carries verifies it (a bad one is
 * UNAUTHENTICATED, the next scheme is not tried), then the tenant (A-31: credentials may limit
 * a principal to some tenants) and the scopes the operator mapped to the RPC
 * (PERMISSION_DENIED). The result is the Caller the lifecycle core scopes every task by; its
 * principal names the scheme too (ownerPrincipal), and it keeps the credential so that a stream
 * can end when the credential does (credential-watch.ts).
 */
export class CallerAuthenticator {
  readonly #authenticators: readonly Authenticator[];
  readonly #scopes: RpcScopes;
  readonly #expected: string;

  constructor(options: CallerAuthenticatorOptions) {
    if (options.authenticators.length === 0) throw new Error("at least one authenticator is needed");
    this.#authenticators = options.authenticators;
    this.#scopes = options.rpcScopes;
    this.#expected = options.authenticators.map((a) => CREDENTIAL_FORMS[a.scheme]).join(", or ");
  }

  /** The verified caller of `method` in `tenant`; throws (or rejects with) an AuthError. */
  authenticate(source: CredentialSource, method: string, tenant: string): Caller | Promise<Caller> {
    return this.#authenticate(source, method, tenant);
  }

  /**
   * The verified caller of a whole service beside A2A (health, reflection) that the operator
   * closed (A2A_AUTH_OPEN_SERVICES): the same credentials and refusals as an A2A RPC, the scopes
   * the table maps to `service` (or `*`); no tenant, since those services have none.
   */
  authenticateService(source: CredentialSource, service: string): Caller | Promise<Caller> {
    return this.#authenticate(source, service, undefined);
  }

  /**
   * Who calls, from the call's credentials alone (metadata and TLS peer; no request needed): the
   * edge runs it before the request is decoded. authorize() then checks tenant and scopes.
   */
  identify(source: CredentialSource): Identity | Promise<Identity> {
    for (const authenticator of this.#authenticators) {
      const identity = authenticator.authenticate(source);
      if (identity !== undefined) return identity;
    }
    throw new AuthError("unauthenticated", "CREDENTIALS_MISSING", `this server requires authentication: send ${this.#expected}`, {
      schemes: this.#authenticators.map((a) => a.scheme).join(","),
    });
  }

  #authenticate(source: CredentialSource, method: string, tenant: string | undefined): Caller | Promise<Caller> {
    const identity = this.identify(source);
    return identity instanceof Promise ? identity.then((id) => this.authorize(id, method, tenant)) : this.authorize(identity, method, tenant);
  }

  /** The caller `identity` is when calling `method` in `tenant` (undefined: a service beside A2A); throws PERMISSION_DENIED. */
  authorize(identity: Identity, method: string, tenant: string | undefined): Caller {
    const granted = identity.tenants;
    let scopeTenant = tenant ?? "";
    if (granted !== undefined && tenant !== undefined) {
      if (tenant === "" && granted.length > 0) scopeTenant = granted[0]!;
      else if (!granted.includes(tenant)) {
        throw new AuthError(
          "permission_denied",
          "TENANT_NOT_ALLOWED",
          `the credential of principal ${quote(identity.principal)} may not act in this tenant; send one of the tenants it grants${granted.length > 0 ? ` (${granted.slice(0, 8).join(", ")})` : " (it grants none)"}`,
          {
            scheme: identity.scheme,
          },
        );
      }
    }
    const required = this.#scopes.forMethod(method);
    for (const scope of required) {
      if (!identity.scopes.includes(scope)) {
        throw new AuthError(
          "permission_denied",
          "SCOPE_MISSING",
          `${method} needs the scope(s) ${required.join(", ")}; the credential of principal ${quote(identity.principal)} lacks ${scope}`,
          {
            scheme: identity.scheme,
            required_scopes: required.join(" "),
          },
        );
      }
    }
    const caller: AuthenticatedCaller = {
      tenant: scopeTenant,
      principal: ownerPrincipal(identity),
      scheme: identity.scheme,
      scopes: identity.scopes,
      claims: identity.claims,
      credential: identity,
    };
    return caller;
  }

  close(): void {
    for (const authenticator of this.#authenticators) authenticator.close?.();
  }
}

function quote(principal: string): string {
  return JSON.stringify(principal.length > 64 ? `${principal.slice(0, 64)}…` : principal);
}
