/**
 * Plugin vector backends (plugin contract §5.w): one VectorBackend per
 * `[plugin.extends].memory_backends` name, each method one request carrying `backend`, within
 * 30 s (upsert, delete) or 10 s (search, which sits on the hot path); NEXO_PLUGIN_MEMORY_TIMEOUT_MS
 * overrides all three. -33301..-33304 arrive as the typed memory errors of @nexo/wire.
 *
 * What the host sends is checked first (a record without an embedding is a bug on our side, not
 * something to ship to a plugin), and so is what comes back.
 */
import { formatIssues, InvalidParamsError } from "@nexo/wire";
import type {
  VectorBackend,
  VectorBackendRegistry,
  VectorMatch,
  VectorQuery,
  VectorRecord,
} from "../../memory/vector.js";
import { type PluginCalls, pluginCalls } from "./calls.js";
import type { PluginHost } from "./host.js";
import { registerEach } from "./registration.js";

type MemoryHost = Pick<PluginHost, "id" | "request" | "requestStream" | "timeouts">;

export class PluginVectorBackend implements VectorBackend {
  readonly name: string;
  readonly owner: string;
  private readonly host: MemoryHost;
  private readonly calls: PluginCalls;

  constructor(host: MemoryHost, name: string) {
    this.host = host;
    this.name = name;
    this.owner = `plugin:${host.id}`;
    this.calls = pluginCalls(host, {
      checkParams: true,
      invalidParams: (method, issues) =>
        new InvalidParamsError(`${method}: ${formatIssues(issues, "(params)")}`, { backend: name }),
    });
  }

  async upsert(collection: string, records: readonly VectorRecord[]): Promise<number> {
    const reply = await this.calls.request(
      "memory.vector_upsert",
      { backend: this.name, collection, records: [...records] },
      { timeoutMs: this.host.timeouts.memory.upsertMs },
    );
    return reply.count;
  }

  async search(collection: string, query: VectorQuery): Promise<VectorMatch[]> {
    const reply = await this.calls.request(
      "memory.vector_search",
      { backend: this.name, collection, query },
      { timeoutMs: this.host.timeouts.memory.searchMs },
    );
    return reply.matches;
  }

  async delete(collection: string, ids: readonly string[]): Promise<number> {
    const reply = await this.calls.request(
      "memory.vector_delete",
      { backend: this.name, collection, ids: [...ids] },
      { timeoutMs: this.host.timeouts.memory.deleteMs },
    );
    return reply.count;
  }
}

/** Registers a backend per `[plugin.extends].memory_backends` name. Returns a function that removes them. */
export function registerPluginVectorBackends(
  host: MemoryHost & Pick<PluginHost, "manifest">,
  registry: VectorBackendRegistry,
): () => void {
  return registerEach(host.manifest.manifest.plugin.extends?.memory_backends ?? [], (name) =>
    registry.register(new PluginVectorBackend(host, name)),
  );
}
