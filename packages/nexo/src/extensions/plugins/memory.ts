/**
 * Plugin vector backends (plugin contract §5.w): one VectorBackend per
 * `[plugin.extends].memory_backends` name, each method one request carrying `backend`, within
 * 30 s (upsert, delete) or 10 s (search, which sits on the hot path); NEXO_PLUGIN_MEMORY_TIMEOUT_MS
 * overrides all three. -33301..-33304 arrive as the typed memory errors of @nexo/wire.
 *
 * What the host sends is checked first (a record without an embedding is a bug on our side, not
 * something to ship to a plugin), and so is what comes back.
 */
import { InvalidParamsError } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import type { z } from "zod";
import type {
  VectorBackend,
  VectorBackendRegistry,
  VectorMatch,
  VectorQuery,
  VectorRecord,
} from "../../memory/vector.js";
import { formatIssues } from "./errors.js";
import type { PluginHost } from "./host.js";
import { registerEach } from "./registration.js";
import { parseReply } from "./reply.js";

type MemoryHost = Pick<PluginHost, "id" | "request" | "timeouts">;

export class PluginVectorBackend implements VectorBackend {
  readonly name: string;
  readonly owner: string;
  private readonly host: MemoryHost;

  constructor(host: MemoryHost, name: string) {
    this.host = host;
    this.name = name;
    this.owner = `plugin:${host.id}`;
  }

  async upsert(collection: string, records: readonly VectorRecord[]): Promise<number> {
    const reply = await this.call(
      "memory.vector_upsert",
      plugin.VectorUpsertParamsSchema,
      { backend: this.name, collection, records },
      this.host.timeouts.memory.upsertMs,
      plugin.VectorUpsertResultSchema,
    );
    return reply.count;
  }

  async search(collection: string, query: VectorQuery): Promise<VectorMatch[]> {
    const reply = await this.call(
      "memory.vector_search",
      plugin.VectorSearchParamsSchema,
      { backend: this.name, collection, query },
      this.host.timeouts.memory.searchMs,
      plugin.VectorSearchResultSchema,
    );
    return reply.matches;
  }

  async delete(collection: string, ids: readonly string[]): Promise<number> {
    const reply = await this.call(
      "memory.vector_delete",
      plugin.VectorDeleteParamsSchema,
      { backend: this.name, collection, ids },
      this.host.timeouts.memory.deleteMs,
      plugin.VectorDeleteResultSchema,
    );
    return reply.count;
  }

  private async call<R extends z.ZodType>(
    method: string,
    paramsSchema: z.ZodType,
    params: Record<string, unknown>,
    timeoutMs: number,
    resultSchema: R,
  ): Promise<z.output<R>> {
    const checked = paramsSchema.safeParse(params);
    if (!checked.success) {
      throw new InvalidParamsError(`${method}: ${formatIssues(checked.error.issues)}`, {
        backend: this.name,
      });
    }
    const reply = await this.host.request(method, checked.data, { timeoutMs });
    return parseReply(resultSchema, method, reply);
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
