/**
 * Everything one scenario runs in: a temp plugin dir with a generated nexo-plugin.toml whose
 * entrypoint is the scripted child, the real PluginManager wired to a real broker and the
 * engine's five registries, and real in-memory services (long-term memory, LLM providers) that
 * record how the host called them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { stringify } from "smol-toml";
import { LocalBroker } from "../../../../src/broker/local.js";
import type { BrokerEvent } from "../../../../src/broker/types.js";
import { ChannelRegistry } from "../../../../src/channels/registry.js";
import { HookRunner } from "../../../../src/engine/hooks.js";
import { ProviderRegistry } from "../../../../src/engine/providers/registry.js";
import { ToolRegistry } from "../../../../src/engine/tools/registry.js";
import type {
  AgentMemory,
  ChatRequest,
  HookPoint,
  LlmProvider,
  MemoryEntry,
  ProviderEvent,
} from "../../../../src/engine/types.js";
import { PluginManager } from "../../../../src/extensions/plugins/manager.js";
import { ProcessGroupRegistry } from "../../../../src/extensions/reaper.js";
import { VectorBackendRegistry } from "../../../../src/memory/vector.js";
import { baseEnv } from "../../../fixtures/plugins/harness.js";
import { type LogEntry, recordingLogger } from "../../../fixtures/processes.js";
import type { ProviderSetup, Scenario } from "./scenario.js";

export const SCRIPTED_CHILD = fileURLToPath(new URL("./scripted-child.mjs", import.meta.url));

/** How the host called its services, for `service_calls` expectations. */
export interface ServiceCalls {
  "memory.recall": Array<{ agent_id: string; query: string; limit: number | undefined }>;
  "llm.complete": Array<{
    provider: string;
    model: string;
    system: string | undefined;
    messages: number;
    max_tokens: number;
    temperature: number | undefined;
  }>;
}

export interface Registries {
  tools: ToolRegistry;
  providers: ProviderRegistry;
  hooks: HookRunner;
  channels: ChannelRegistry;
  vectors: VectorBackendRegistry;
}

/** The name of the handler registered after the plugin's hooks, to prove the next one still runs. */
export const NEXT_HOOK = "conformance:next";

export class ScenarioEnvironment {
  readonly scenario: Scenario;
  readonly root: string;
  readonly reportPath: string;
  readonly logs: LogEntry[];
  readonly broker: LocalBroker;
  readonly registries: Registries;
  readonly manager: PluginManager;
  readonly groups = new ProcessGroupRegistry();
  /** Events plugins published that reached the broker (`plugin.inbound.>`). */
  readonly published: BrokerEvent[] = [];
  readonly serviceCalls: ServiceCalls = { "memory.recall": [], "llm.complete": [] };
  /** Bumped by the trailing hook handler each time it runs. */
  nextHookRuns = 0;

  constructor(scenario: Scenario, scenarioFile: string) {
    this.scenario = scenario;
    this.root = mkdtempSync(join(tmpdir(), `nexo-conformance-${scenario.name}-`));
    this.reportPath = join(this.root, "child-report.jsonl");
    const pluginDir = join(this.root, "plugin");
    mkdirSync(pluginDir);
    writeFileSync(join(pluginDir, "nexo-plugin.toml"), manifestToml(scenario, scenarioFile));

    const logger = recordingLogger();
    this.logs = logger.entries;
    this.broker = new LocalBroker({ logger: recordingLogger() as never });
    this.broker.subscribe("plugin.inbound.>", (event) => {
      this.published.push(event);
    });
    const hookWarn = (fields: object, message: string) => logger.warn(fields, message);
    this.registries = {
      tools: new ToolRegistry(),
      providers: new ProviderRegistry(),
      hooks: new HookRunner(hookWarn),
      channels: new ChannelRegistry(),
      vectors: new VectorBackendRegistry(),
    };
    const setup = scenario.setup ?? {};
    const id = scenario.manifest.plugin.id;
    this.manager = new PluginManager({
      plugins: [pluginDir],
      stateRoot: join(this.root, "state"),
      env: baseEnv(setup.env ?? {}),
      broker: this.broker,
      registries: this.registries,
      services: {
        ...(setup.memory ? { memory: new RecordingMemory(setup.memory, this.serviceCalls) } : {}),
        ...(setup.providers ? { providers: providerLookup(setup.providers, this.serviceCalls) } : {}),
      },
      settings: {
        [id]: {
          env: { CONFORMANCE_REPORT: this.reportPath },
          ...(setup.grants ? { grants: setup.grants } : {}),
        },
      },
      ...(setup.shutdown_timeout_ms ? { shutdownTimeoutMs: setup.shutdown_timeout_ms } : {}),
      ...(setup.exit_grace_ms ? { exitGraceMs: setup.exit_grace_ms } : {}),
      logger,
      processGroups: this.groups,
    });
  }

  /** Registers the trailing hook handler; called once the plugin's own hooks are in. */
  addNextHook(): void {
    const points: HookPoint[] = ["before_message", "before_tool", "after_tool", "before_reply"];
    this.registries.hooks.register({
      name: NEXT_HOOK,
      points,
      onHook: async () => {
        this.nextHookRuns += 1;
        return { decision: "continue" };
      },
    });
  }

  async dispose(): Promise<void> {
    await this.manager.stop("scenario over").catch(() => undefined);
    this.groups.killAll("SIGKILL");
    await this.broker.close({ drainTimeoutMs: 100 }).catch(() => undefined);
    rmSync(this.root, { recursive: true, force: true });
  }
}

function manifestToml(scenario: Scenario, scenarioFile: string): string {
  const plugin = {
    ...scenario.manifest.plugin,
    entrypoint: { command: process.execPath, args: [SCRIPTED_CHILD, scenarioFile] },
  };
  return `# Generated by the conformance runner for scenario "${scenario.name}".\n${stringify({ plugin })}\n`;
}

/** A real, small long-term memory: substring search, recording every recall. */
class RecordingMemory implements AgentMemory {
  private readonly entries: MemoryEntry[];
  constructor(
    private readonly setup: NonNullable<Scenario["setup"]>["memory"] & object,
    private readonly calls: ServiceCalls,
  ) {
    this.entries = setup.entries.map((entry, index) => ({
      id: `m${index + 1}`,
      agentId: entry.agent_id,
      content: entry.content,
      tags: entry.tags ?? [],
      conceptTags: [],
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
    }));
  }

  async store(): Promise<MemoryEntry> {
    throw new Error("the conformance memory is read-only");
  }

  async recall(agentId: string, query: string, limit?: number): Promise<MemoryEntry[]> {
    this.calls["memory.recall"].push({ agent_id: agentId, query, limit });
    if (this.setup.fail !== undefined) throw new Error(this.setup.fail);
    return this.entries
      .filter((entry) => entry.agentId === agentId && entry.content.includes(query))
      .slice(0, limit);
  }
}

function providerLookup(setups: Record<string, ProviderSetup>, calls: ServiceCalls) {
  const providers = new Map(
    Object.entries(setups).map(([name, setup]) => [name, scriptedProvider(name, setup, calls)]),
  );
  return { get: (name: string) => providers.get(name) };
}

/** A provider that streams what the scenario says, as the engine's providers do. */
function scriptedProvider(name: string, setup: ProviderSetup, calls: ServiceCalls): LlmProvider {
  return {
    id: name,
    async *stream(request: ChatRequest): AsyncGenerator<ProviderEvent> {
      calls["llm.complete"].push({
        provider: name,
        model: request.model,
        system: request.system,
        messages: request.messages.length,
        max_tokens: request.maxTokens,
        temperature: request.temperature,
      });
      if (setup.delay_ms) await sleep(setup.delay_ms, undefined, { signal: request.signal });
      if (setup.tool_calls_only) {
        yield { type: "tool_call", id: "call_1", name: "lookup", input: {} };
        yield { type: "stop", reason: "tool_use" };
        return;
      }
      for (const text of setup.chunks ?? []) yield { type: "text_delta", text };
      if (setup.error !== undefined) throw new Error(setup.error);
      const usage = setup.usage ?? { input_tokens: 0, output_tokens: 0 };
      yield { type: "usage", usage: { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens } };
      yield { type: "stop", reason: setup.stop ?? "end_turn" };
    },
  };
}
