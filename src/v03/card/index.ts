/** The agent card for A2A v0.3 clients (A-37, R-V03-50/51): its v0.3 view, the header-less superset, the 0.3 interfaces. */
export { cardJsonForms, type CardJsonForms } from "./card-forms.js";
export { toSupersetCardJson } from "./superset-card-json.js";
export { toV03CardJson, V03_PROTOCOL_VERSION, type V03AgentCardJson } from "./v03-card-json.js";
export { v03CardInterfaces, type PreferredBinding, type V03InterfaceSettings } from "./v03-interfaces.js";
