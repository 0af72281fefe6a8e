import { toJson, type JsonObject } from "@bufbuild/protobuf";
import { AgentCardSchema, type AgentCard } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { toSupersetCardJson } from "./superset-card-json.js";
import { toV03CardJson, v03InterfacesOf } from "./v03-card-json.js";

/** The JSON documents served at /.well-known/agent-card.json. */
export interface CardJsonForms {
  /** Served without an A2A-Version (and for a version the card does not negotiate). */
  readonly headerless: JsonObject;
  /** Negotiated on A2A-Version (A-37, R-V03-51); absent when the card lists no 0.3 interface (A2A_V03=off): one form then. */
  readonly byVersion?: { readonly v10: JsonObject; readonly v03: JsonObject };
}

export function cardJsonForms(card: AgentCard): CardJsonForms {
  // ProtoJSON: camelCase names, enum names, unset optionals omitted, explicit false kept (R-DATA-5, R-CAP-5).
  const v10 = toJson(AgentCardSchema, card) as JsonObject;
  if (v03InterfacesOf(card).length === 0) return { headerless: v10 };
  return { headerless: toSupersetCardJson(card), byVersion: { v10, v03: toV03CardJson(card) as JsonObject } };
}
