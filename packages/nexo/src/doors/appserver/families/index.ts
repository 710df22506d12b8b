/**
 * Every method family the AppServer serves, in one list: a family is one file under families/ and
 * one line here. Its capability flags are advertised only because it is listed (family.ts) and
 * available on this server (the management families need the daemon's services). The families
 * served without those services are core.ts's.
 */
import type { MethodFamily } from "../family.js";
import { channelStatusFamily } from "./channels.js";
import { CORE_FAMILIES } from "./core.js";
import { externalChannelFamily } from "./external-channels.js";
import { mcpFamily, mcpStatusFamily } from "./mcp.js";
import { modelFamily } from "./models.js";
import { pluginFamily } from "./plugins.js";
import { skillsFamily } from "./skills.js";
import { subAgentFamily } from "./subagents.js";
import { notLiveFamily } from "./unsupported.js";
import { workspaceConfigFamily } from "./workspace-config.js";

export const FAMILIES: readonly MethodFamily[] = [
  ...CORE_FAMILIES,
  modelFamily,
  mcpFamily,
  mcpStatusFamily,
  subAgentFamily,
  skillsFamily,
  pluginFamily,
  channelStatusFamily,
  externalChannelFamily,
  workspaceConfigFamily,
  notLiveFamily,
];
