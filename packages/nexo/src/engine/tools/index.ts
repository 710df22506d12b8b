export { type BashToolOptions, createBashTool } from "./bash.js";
export { type BuiltinToolOptions, builtinTools } from "./builtins.js";
export {
  type ConfineOptions,
  displayPath,
  isInside,
  PathEscapeError,
  type PathEscapeReason,
  PathNotFoundError,
  realWorkspace,
  resolveInWorkspace,
} from "./confine.js";
export { createEditTool, type EditToolOptions, unifiedDiff } from "./edit.js";
export {
  DuplicateToolError,
  InvalidToolError,
  type ToolArgumentIssue,
  ToolArgumentsError,
  UnknownToolError,
} from "./errors.js";
export { createGlobTool, type GlobToolOptions } from "./glob.js";
export { GlobPatternError, globToRegExp } from "./glob-pattern.js";
export { createGrepTool, type GrepToolOptions } from "./grep.js";
export { createMemoryRecallTool, createMemoryStoreTool, type MemoryToolOptions } from "./memory.js";
export { createReadTool, type ReadToolOptions } from "./read.js";
export {
  DEFAULT_MAX_OUTPUT_BYTES,
  ToolRegistry,
  type ToolRegistryOptions,
  type ToolValidation,
} from "./registry.js";
export { createWriteTool } from "./write.js";
