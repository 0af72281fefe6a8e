export { createRestBinding, type RestBindingOptions, type RestCodec } from "./rest-binding.js";
export { HttpRuleRouter, type HttpRoute, type RouteMatch } from "./http-rule-router.js";
export { restFailure, transportFailure, type RestFailure } from "./rest-errors.js";
export { decodeRestRequest } from "./rest-request.js";
export { A2A_JSON, REST_V1_ROUTER, createRestV1Binding } from "./rest-v1.js";
export { REST_V03_ROUTER, createRestV03Binding } from "./rest-v03.js";
