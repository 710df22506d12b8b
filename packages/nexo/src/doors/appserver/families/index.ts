/**
 * Every method family the AppServer serves, in one list: a family is one file under families/ and
 * one line here. Its capability flags are advertised only because it is listed (family.ts) and
 * available on this server (the management families need the daemon's services).
 */
import type { MethodFamily } from "../family.js";
import { channelListFamily, channelStatusFamily } from "./channels.js";
import { commandFamily } from "./commands.js";
import { mcpFamily, mcpStatusFamily } from "./mcp.js";
import { modelFamily } from "./models.js";
import { pluginFamily } from "./plugins.js";
import { skillsFamily } from "./skills.js";
import { subAgentFamily } from "./subagents.js";
import { threadFamily } from "./threads.js";
import { turnFamily } from "./turns.js";

export const FAMILIES: readonly MethodFamily[] = [
  threadFamily,
  turnFamily,
  commandFamily,
  modelFamily,
  mcpFamily,
  mcpStatusFamily,
  subAgentFamily,
  skillsFamily,
  pluginFamily,
  channelListFamily,
  channelStatusFamily,
];
