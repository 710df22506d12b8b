/**
 * LLM providers and their keys (capability llm_keys_crud, optional). A key is handed to the
 * daemon once, which stores it as a secret and records only a reference in llm.yaml; it is never
 * read back, echoed in a tool result, or written to this microapp's logs.
 */
import type { Microapp } from "nexo-plugin-sdk/microapp";
import type { Settings } from "./settings.js";

export function defineLlmKeyTools(app: Microapp<Settings>): void {
  app.tool({
    name: "agent_creator_list_llm_providers",
    description: "List the LLM providers: id, base URL, where the key comes from",
    inputSchema: { type: "object", properties: {} },
    handler: async (_args, { admin }) => {
      const { providers } = await admin.llm_providers.list();
      return {
        providers: providers.map(({ id, base_url, api_key_env }) => ({
          id,
          base_url,
          key: api_key_env === "" ? "secret store" : `env ${api_key_env}`,
        })),
      };
    },
  });

  app.tool<{ provider: string; base_url: string; api_key: string }>({
    name: "agent_creator_set_llm_key",
    description: "Add an LLM provider or replace its API key",
    inputSchema: {
      type: "object",
      properties: {
        provider: { type: "string", description: "The provider id agents refer to (e.g. anthropic)" },
        base_url: { type: "string", description: "The provider's API base URL" },
        api_key: { type: "string", description: "The API key; stored by the daemon, never shown again" },
      },
      required: ["provider", "base_url", "api_key"],
    },
    handler: async (args, { admin }) => {
      const saved = await admin.llm_providers.upsert({
        id: args.provider,
        base_url: args.base_url,
        api_key_secret_value: args.api_key,
      });
      return { provider: saved.id, base_url: saved.base_url, key: "stored" };
    },
  });
}
