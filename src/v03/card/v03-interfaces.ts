import { V03_PROTOCOL_VERSION } from "./v03-card-json.js";

/*
 * The card's 0.3 interfaces (A-37, R-V03-6): one per v0.3 binding the server serves, listed after
 * the 1.0 ones, with protocolVersion "0.3". The first of them is the v0.3 card's `url` and
 * `preferredTransport`, so they follow the operator's A2A_PREFERRED_BINDING too.
 */

export type PreferredBinding = "grpc" | "jsonrpc" | "rest";

export interface V03InterfaceSettings {
  /** host:port of the gRPC server, as the card's GRPC 1.0 interface names it: a2a.v1.A2AService is on the same port (R-V03-2). */
  readonly grpcAddress: string;
  /** The HTTP listener's public base URL; undefined when no HTTP listener runs (then only gRPC serves 0.3). */
  readonly httpBase: string | undefined;
  /** config.v03's paths; null = that 0.3 binding is off. */
  readonly jsonRpcPath: string | null;
  readonly restPath: string | null;
  readonly preferred: PreferredBinding;
}

export interface V03CardInterface {
  readonly url: string;
  readonly protocolBinding: string;
  readonly protocolVersion: string;
}

const BINDING_NAMES: Readonly<Record<PreferredBinding, string>> = { grpc: "GRPC", jsonrpc: "JSONRPC", rest: "HTTP+JSON" };

export function v03CardInterfaces(settings: V03InterfaceSettings): V03CardInterface[] {
  const { httpBase } = settings;
  const urls: Record<PreferredBinding, string | undefined> = {
    grpc: settings.grpcAddress,
    jsonrpc: httpBase !== undefined && settings.jsonRpcPath !== null ? httpBase + settings.jsonRpcPath : undefined,
    rest: httpBase !== undefined && settings.restPath !== null ? httpBase + settings.restPath : undefined,
  };
  const order: PreferredBinding[] = [settings.preferred, ...(["grpc", "jsonrpc", "rest"] as const).filter((b) => b !== settings.preferred)];
  return order.flatMap((binding) => {
    const url = urls[binding];
    return url === undefined ? [] : [{ url, protocolBinding: BINDING_NAMES[binding], protocolVersion: V03_PROTOCOL_VERSION }];
  });
}
