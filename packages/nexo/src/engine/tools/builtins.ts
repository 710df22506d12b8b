/**
 * The built-in tools, configured together. `Spawn` is not here: it needs the turn loop and is
 * registered by the engine itself.
 */
import type { Tool } from "../types.js";
import { type BashToolOptions, createBashTool } from "./bash.js";
import { createEditTool, type EditToolOptions } from "./edit.js";
import { createGlobTool, type GlobToolOptions } from "./glob.js";
import { createGrepTool, type GrepToolOptions } from "./grep.js";
import { createMemoryRecallTool, createMemoryStoreTool, type MemoryToolOptions } from "./memory.js";
import { createReadTool, type ReadToolOptions } from "./read.js";
import { createWriteTool } from "./write.js";

export interface BuiltinToolOptions {
  readonly read?: ReadToolOptions;
  readonly edit?: EditToolOptions;
  readonly bash?: BashToolOptions;
  readonly glob?: GlobToolOptions;
  readonly grep?: GrepToolOptions;
  /** The memory tools' limits, or `false` for no memory tools (memory.yaml turns memory off). */
  readonly memory?: MemoryToolOptions | false;
}

/** Read, Write, Edit, Bash, Glob, Grep, and (unless `memory: false`) memory_store and memory_recall. */
export function builtinTools(options: BuiltinToolOptions = {}): Tool[] {
  const memory =
    options.memory === false ? [] : [createMemoryStoreTool(), createMemoryRecallTool(options.memory)];
  return [
    createReadTool(options.read),
    createWriteTool(),
    createEditTool(options.edit),
    createBashTool(options.bash),
    createGlobTool(options.glob),
    createGrepTool(options.grep),
    ...memory,
  ];
}
