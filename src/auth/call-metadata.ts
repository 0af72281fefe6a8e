/*
 * What credentials are read from, whatever binding carried the call (authentication reads it before
 * any request body is decoded).
 */

/** One value of a call's request metadata: text, or bytes for gRPC's "-bin" keys. */
export type CallMetadataValue = string | Buffer;

/**
 * The request's service parameters and credentials, keyed by lower-case name: gRPC metadata as
 * grpc-js gives it, or an HTTP binding's request headers. grpc-js's Metadata satisfies it as is.
 */
export interface CallMetadata {
  /** Every value of `key` (lower case), in the order received; [] when absent. */
  get(key: string): CallMetadataValue[];
  /** Every key with its first value (for the debug log and the trace propagators). */
  getMap(): { [key: string]: CallMetadataValue };
}
