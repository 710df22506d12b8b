/**
 * `model/list` (`modelCatalogManagement`): the models this workspace's configuration names — each
 * agent's model and each provider's `default_model` in llm.yaml — owned by the provider entry that
 * serves them. nexo does not ask the vendors for their whole catalog: a model offered here is one
 * the configuration can already run. A configuration that cannot be read is `success: false` with
 * the problem, not an RPC error, as the protocol wants.
 */
import { stat } from "node:fs/promises";
import { type ModelCatalogItem, type ModelListResult, modelMethods } from "@nexo/wire/schemas/appserver";
import { ServiceError } from "../../../daemon/services/errors.js";
import type { DaemonServices } from "../../../daemon/services/index.js";
import { isoTime } from "../../../iso-time.js";
import { defineFamily } from "../family.js";
import { managesConfig, servicesOf } from "./managed.js";

/** When a config file was last written, as the catalog's `createdAt` (the vendors' dates are not asked for). */
async function writtenAt(services: DaemonServices, name: "agents" | "llm"): Promise<string> {
  const location = await services.config.locate(name);
  const info = location.exists ? await stat(location.path).catch(() => undefined) : undefined;
  return isoTime(info?.mtime);
}

export async function listModels(services: DaemonServices): Promise<ModelListResult> {
  try {
    const [agents, providers] = await Promise.all([services.agents.list(), services.providers.list()]);
    const [agentsAt, llmAt] = await Promise.all([writtenAt(services, "agents"), writtenAt(services, "llm")]);
    const models = new Map<string, ModelCatalogItem>();
    const add = (id: string, ownedBy: string, createdAt: string) => {
      const key = `${ownedBy}\u0000${id}`;
      if (!models.has(key)) models.set(key, { id, ownedBy, createdAt });
    };
    for (const provider of providers) {
      const model = provider.entry.default_model;
      if (provider.tenantId === undefined && typeof model === "string") add(model, provider.id, llmAt);
    }
    for (const agent of agents) add(agent.model.model, agent.model.provider, agentsAt);
    return { success: true, models: [...models.values()] };
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    return { success: false, models: [], errorCode: error.name, errorMessage: error.message };
  }
}

export const modelFamily = defineFamily({
  name: "models",
  methods: modelMethods,
  available: managesConfig,
  capabilities: () => ({ modelCatalogManagement: true }),
  handlers: {
    "model/list": (_params, call) => listModels(servicesOf(call)),
  },
});
