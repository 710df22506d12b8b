/**
 * Config machinery shared by every nexo config file: parsing YAML/TOML, `${...}` substitution,
 * validation with positioned errors, and atomic, comment-preserving writes. The schemas of the
 * individual files (agents.yaml, llm.yaml, ...) live elsewhere and are passed in.
 */
export {
  ConfigError,
  type ConfigErrorCode,
  type ConfigIssue,
  formatIssue,
  formatKeyPath,
  type PathSegment,
} from "./errors.js";
export {
  type ConfigFormat,
  configFormatOf,
  type LoadConfigOptions,
  listConfigFiles,
  loadConfigFile,
  type ParseConfigOptions,
  parseConfigText,
} from "./load.js";
export type { SourcePos } from "./locate.js";
export {
  type Env,
  escapeSubstitution,
  type SubstitutionOptions,
  substituteString,
  substituteValues,
} from "./substitute.js";
export { isTempFileName } from "./temp-name.js";
export {
  type EditYamlOptions,
  type EditYamlResult,
  editYamlFile,
  type WriteFileAtomicOptions,
  withConfigFileLock,
  writeFileAtomic,
  writeFileAtomicIn,
} from "./write.js";
