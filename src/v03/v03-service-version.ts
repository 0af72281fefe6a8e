import { VersionNotSupportedError } from "../lifecycle/index.js";
import { A2A_V03_SERVICE } from "../service/call-observer.js";
import type { CallMetadata } from "../service/face.js";
import { listValues, VERSION_KEY } from "../service/service-parameters.js";

/*
 * Which calls the v0.3 service takes (R-V03-2, A-36): the service a2a.v1.A2AService is the v0.3
 * generation, so a missing or empty a2a-version, or 0.3, is right there; any other version is
 * VERSION_NOT_SUPPORTED pointing to the v1.0 service. The v1.0 service, for its part, keeps
 * refusing a missing version and names this service for v0.3 clients.
 */

/** The v0.3 gRPC service's full name (also its observers' service name, from which the version label comes). */
export const V03_SERVICE_NAME = A2A_V03_SERVICE;
export const V1_SERVICE_NAME = "lf.a2a.v1.A2AService";
const V03 = "0.3";

/** 0.3, 0.3.x and 00.3 are 0.3; patch numbers play no role (R-VER-5). */
function isV03(version: string): boolean {
  const match = /^(\d{1,9})\.(\d{1,9})(?:\.\d{1,9})?$/.exec(version);
  return match !== null && Number(match[1]) === 0 && Number(match[2]) === 3;
}

/** How a v0.3 endpoint words its refusal of a version: `shown` is the version as sent, quoted and bounded. */
export type V03Refusal = (shown: string) => string;

const GRPC_REFUSAL: V03Refusal = (shown) =>
  `a2a-version ${shown} is not served by ${V03_SERVICE_NAME}, which speaks A2A 0.3 (send no a2a-version, or "a2a-version: 0.3"); A2A 1.0 is served by ${V1_SERVICE_NAME}`;

/**
 * Throws VERSION_NOT_SUPPORTED unless the call's a2a-version is absent, empty, or lists 0.3: the
 * rule of every v0.3 endpoint (gRPC, JSON-RPC, HTTP+JSON); each words the way to its 1.0 twin.
 */
export function checkV03Version(metadata: CallMetadata, refusal: V03Refusal = GRPC_REFUSAL): void {
  const requested = listValues(metadata, VERSION_KEY);
  if (requested.length === 0 || requested.some(isV03)) return;
  throw new V03VersionNotSupportedError(requested.join(","), refusal);
}

/** VERSION_NOT_SUPPORTED on a v0.3 endpoint: supported_versions 0.3, and where the other versions are served. */
export class V03VersionNotSupportedError extends VersionNotSupportedError {
  constructor(requested: string, refusal: V03Refusal = GRPC_REFUSAL) {
    super(requested, [V03]);
    this.message = refusal(JSON.stringify(this.metadata.requested_version));
  }
}

/**
 * A v1.0 refusal of a missing (or 0.x) a2a-version, told that v0.3 clients have a service of
 * their own on this port. Other errors pass unchanged.
 */
export function pointToV03Service(error: unknown): unknown {
  if (!(error instanceof VersionNotSupportedError) || error instanceof V03VersionNotSupportedError) return error;
  const requested = error.metadata.requested_version ?? "";
  if (requested !== "" && !requested.split(",").some((v) => /^0+\./.test(v.trim()))) return error;
  error.message = `${error.message}, or call ${V03_SERVICE_NAME} for A2A 0.3`;
  return error;
}
