/**
 * The families every AppServer serves, with or without management services: threads, turns,
 * slash commands, the channel list, sub-agent child threads, the model's commit-message and welcome suggestions, and the typed -32601 answers of what is not served
 * (unsupported.ts). `nexo app-server` without a config directory serves only these (every other
 * family needs the services, so it would be neither served nor advertised anyway), which keeps the
 * management families and what they import off its start-up path — the first `initialize` answer.
 */
import type { MethodFamily } from "../family.js";
import { channelListFamily } from "./channels.js";
import { commandFamily } from "./commands.js";
import { subAgentSessionFamily } from "./subagent-sessions.js";
import { suggestionsFamily } from "./suggestions.js";
import { threadFamily } from "./threads.js";
import { turnFamily } from "./turns.js";
import { absentFamily, withoutConfigFamily } from "./unsupported.js";

export const CORE_FAMILIES: readonly MethodFamily[] = [
  threadFamily,
  turnFamily,
  commandFamily,
  channelListFamily,
  suggestionsFamily,
  subAgentSessionFamily,
  absentFamily,
  withoutConfigFamily,
];
