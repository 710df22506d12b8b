/**
 * MCP servers: the entries of mcp.yaml with their live state. A change is an edit of the server's
 * entry followed by a hot reload, which reconnects exactly the servers whose entry changed and
 * waits for them (each within its startup timeout), so the status returned is the new one.
 */
import type { z } from "zod";
import { substituteValues } from "../../config/index.js";
import { McpConfigSchema, McpServerConfigSchema, serverNameProblem } from "../../extensions/mcp/config.js";
import type { McpServerStatus } from "../../extensions/mcp/manager.js";
import type { ReloadReport } from "../types.js";
import type { ConfigFiles } from "./config-files.js";
import { NotFoundError } from "./errors.js";
import { ensureBlockMapping, type Patch, patchMapping, withoutRemovals } from "./yaml-patch.js";

/** A server's entry of mcp.yaml as written. */
export type McpServerEntry = z.input<typeof McpServerConfigSchema>;

/** Keys of one transport that mean nothing to the other; dropped when an entry changes transport. */
const TRANSPORT_KEYS = {
  stdio: ["command", "args", "env", "cwd", "restart"],
  http: ["url", "headers"],
} as const;

export interface McpServerRecord {
  name: string;
  entry: McpServerEntry;
  /** The live state; undefined while the server is not started (disabled, or not connected yet). */
  status: McpServerStatus | undefined;
}

export interface McpUpsertResult {
  server: McpServerRecord;
  created: boolean;
  reload: ReloadReport | undefined;
}

/** What `test` found: the tools the server offered, or why it could not be reached. */
export type McpProbeResult =
  | { ok: true; tools: string[] }
  | { ok: false; reason: string; failure: "invalid_config" | "connect" };

/** What the services need of the running MCP servers. */
export interface McpRuntime {
  statuses(): McpServerStatus[];
  /** Calls `listener` on every change of a running server's state; returns the unsubscribe. */
  watch?(listener: (status: McpServerStatus) => void): () => void;
}

export interface McpDeleteResult {
  removed: boolean;
  reload: ReloadReport | undefined;
}

export class McpService {
  constructor(
    private readonly files: ConfigFiles,
    private readonly live: McpRuntime,
  ) {}

  /** The servers of mcp.yaml by name, each with its live state. */
  async list(): Promise<McpServerRecord[]> {
    const servers = (await this.files.read("mcp", McpConfigSchema))?.servers ?? {};
    const statuses = new Map(this.live.statuses().map((status) => [status.name, status]));
    return Object.entries(servers)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, entry]) => ({ name, entry, status: statuses.get(name) }));
  }

  /** One server; NotFoundError when mcp.yaml has none of that name. */
  async get(name: string): Promise<McpServerRecord> {
    const server = (await this.list()).find((candidate) => candidate.name === name);
    if (server === undefined) throw new NotFoundError("mcp_server", name, "in mcp.yaml");
    return server;
  }

  /**
   * Creates the server's entry (a new one needs `transport` and its command or url) or changes
   * the keys the patch carries; switching `transport` drops the other transport's keys. The
   * server is (re)connected before this resolves.
   */
  async upsert(name: string, patch: Patch<McpServerEntry>): Promise<McpUpsertResult> {
    const path = ["servers", name];
    let created = false;
    const edit = await this.files.edit("mcp", (doc) => {
      created = !doc.hasIn(path);
      if (created) {
        ensureBlockMapping(doc, ["servers"]);
        doc.setIn(path, doc.createNode(withoutRemovals(patch)));
        return;
      }
      const before = doc.getIn([...path, "transport"]);
      const after = patch.transport ?? before;
      const family = (transport: unknown) => (transport === "stdio" ? "stdio" : "http");
      if (after !== before && family(after) !== family(before)) {
        for (const key of TRANSPORT_KEYS[family(before)]) doc.deleteIn([...path, key]);
      }
      patchMapping(doc, path, patch);
    });
    return { server: await this.get(name), created, reload: edit.reload };
  }

  /** Removes the entry and disconnects the server; `removed: false` when there was none. */
  async delete(name: string): Promise<McpDeleteResult> {
    let removed = false;
    const edit = await this.files.edit("mcp", (doc) => {
      removed = doc.hasIn(["servers", name]);
      if (removed) doc.deleteIn(["servers", name]);
    });
    return { removed, reload: edit.reload };
  }

  /** The live state of every server the daemon started (disabled ones are not listed). */
  status(): McpServerStatus[] {
    return this.live.statuses();
  }

  /** Calls `listener` whenever a running server's state changes; a no-op where nothing runs. */
  watch(listener: (status: McpServerStatus) => void): () => void {
    return this.live.watch?.(listener) ?? (() => {});
  }

  /**
   * Connects `entry` (placeholders expanded as the daemon would, relative paths from the config
   * directory) under a throwaway manager, lists its tools and disconnects. Nothing is written and
   * nothing the daemon runs is touched; a server that cannot be reached is a result, not an error.
   */
  async test(name: string, entry: McpServerEntry): Promise<McpProbeResult> {
    const problem = serverNameProblem(name);
    if (problem !== undefined) return { ok: false, failure: "invalid_config", reason: `name ${problem}` };
    const env = await this.files.substitutionEnv();
    const dir = this.files.dir;
    const expanded = substituteValues(entry, { env, baseDir: dir });
    if (expanded.failures.length > 0) {
      const messages = expanded.failures.flatMap((failure) => failure.messages);
      return { ok: false, failure: "invalid_config", reason: messages.join("; ") };
    }
    const parsed = McpServerConfigSchema.safeParse(expanded.value);
    if (!parsed.success) {
      const reason = parsed.error.issues.map((issue) => issue.message).join("; ");
      return { ok: false, failure: "invalid_config", reason };
    }
    const { McpManager } = await import("../../extensions/mcp/index.js");
    const probe = new McpManager({ configDir: dir, hostEnv: env });
    try {
      const status = await probe.connect(name, parsed.data, { restart: { respawn: false } });
      return { ok: true, tools: status.tools };
    } catch (error) {
      return {
        ok: false,
        failure: "connect",
        reason: error instanceof Error ? error.message : String(error),
      };
    } finally {
      await probe.close();
    }
  }
}
