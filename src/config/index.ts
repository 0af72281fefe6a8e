export type { Config, TlsConfig } from "./config.js";
export { ConfigError } from "../settings/config-error.js";
export { describeConfig, describeConfigForTerminal } from "./describe-config.js";
export { loadConfig, wantsHelp, type ConfigSources } from "./load-config.js";
export { SETTINGS, type Setting, type SettingKey } from "./settings.js";
export { SETTING_GROUPS, type SettingGroup } from "./settings.js";
