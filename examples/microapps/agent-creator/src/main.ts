/**
 * agent-creator: a microapp that lets an agent (or its operator, through an agent) create and
 * manage agents, their LLM providers and keys, and skills — all through the daemon's admin RPC,
 * gated by the capabilities plugin.toml declares and extensions.yaml grants.
 *
 * A call whose capability was not granted, and that a tool does not catch, reaches the agent as
 * the tool's error ("… refused: the operator has not granted the capability llm_keys_crud").
 */
import { Microapp } from "nexo-plugin-sdk/microapp";
import { defineAgentTools } from "./agents.js";
import { defineLlmKeyTools } from "./llm-keys.js";
import { type Settings, settingsParser } from "./settings.js";
import { defineSkillTools } from "./skills.js";

const app = new Microapp<Settings>({ id: "agent-creator", version: "0.1.0", config: settingsParser });

defineAgentTools(app);
defineLlmKeyTools(app);
defineSkillTools(app);

app.on("agents/updated", ({ agent_ids }) => {
  app.log.info(`agents now: ${agent_ids.join(", ") || "none"}`);
});

await app.run();
