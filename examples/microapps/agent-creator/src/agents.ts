/**
 * Agents (capability agents_crud, required): list, read, create or update, delete. Each change is
 * an agents.yaml edit the daemon makes and hot-reloads; the microapp never touches the file.
 */
import { type Microapp, ToolFailure } from "nexo-plugin-sdk/microapp";
import type { Settings } from "./settings.js";

const AGENT_ID = { type: "string", description: "The agent's id (a-z, 0-9, '-', '_')" };

export function defineAgentTools(app: Microapp<Settings>): void {
  app.tool({
    name: "agent_creator_list_agents",
    description: "List every agent with its model provider and whether it is active",
    inputSchema: { type: "object", properties: {} },
    handler: async (_args, { admin }) => {
      const { agents } = await admin.agents.list();
      return { agents: agents.map(({ id, active, model_provider }) => ({ id, active, model_provider })) };
    },
  });

  app.tool<{ id: string }>({
    name: "agent_creator_get_agent",
    description: "Show one agent: model, prompt, bindings, allowed tools",
    inputSchema: { type: "object", properties: { id: AGENT_ID }, required: ["id"] },
    handler: (args, { admin }) => admin.agents.get({ agent_id: args.id }),
  });

  app.tool<{ id: string; system_prompt?: string; provider?: string; model?: string }>({
    name: "agent_creator_create_agent",
    description: "Create an agent, or update the prompt or model of an existing one",
    inputSchema: {
      type: "object",
      properties: {
        id: AGENT_ID,
        system_prompt: { type: "string", description: "What the agent is told it is" },
        provider: { type: "string", description: "An llm.yaml provider id (default: the configured one)" },
        model: { type: "string", description: "The model name within that provider" },
      },
      required: ["id"],
    },
    handler: async (args, { admin }) => {
      const settings = app.initialized!.config;
      if ((args.provider === undefined) !== (args.model === undefined)) {
        throw new ToolFailure("give both provider and model, or neither for the default model");
      }
      const model =
        args.provider && args.model ? { provider: args.provider, model: args.model } : settings.default_model;
      const agent = await admin.agents.upsert({
        id: args.id,
        model,
        system_prompt: args.system_prompt ?? settings.system_prompt,
      });
      return { id: agent.id, model: agent.model, active: agent.active };
    },
  });

  app.tool<{ id: string }>({
    name: "agent_creator_delete_agent",
    description: "Delete an agent",
    inputSchema: { type: "object", properties: { id: AGENT_ID }, required: ["id"] },
    handler: async (args, { admin }) => {
      const { removed } = await admin.agents.delete({ agent_id: args.id });
      return removed ? { deleted: args.id } : { deleted: null, note: `no agent ${args.id}` };
    },
  });
}
