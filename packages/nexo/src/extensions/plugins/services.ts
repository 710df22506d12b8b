/**
 * The framework services a plugin may call on its host (plugin contract §5.2, §5.3):
 * `memory.recall` over the engine's AgentMemory and `llm.complete` over the provider registry,
 * each behind the plugin's grants (grants.ts). The peer dispatches requests concurrently, so a
 * slow `llm.complete` never holds up another request of the same plugin.
 *
 * Error codes (the contract's, plus nexo's decisions in the reserved band):
 *   -32602 invalid params · -32603 not configured / backend or provider failure ·
 *   -32601 the provider answered only with tool calls · -32010 / -32011 not granted ·
 *   -32012 too many service calls running for this plugin.
 */
import {
  Dispatcher,
  type Disposer,
  InternalError,
  InvalidParamsError,
  MethodNotFoundError,
  PluginHostCode,
  type RequestContext,
  RpcError,
} from "@nexo/wire";
import * as plugin from "@nexo/wire/schemas/plugin";
import { type OneShotResult, oneShotRequest, runOneShot } from "../../engine/providers/one-shot.js";
import type { AgentMemory, LlmProvider, StopReason } from "../../engine/types.js";
import { checkMemoryGrant, checkProviderGrant, NO_GRANTS, type PluginGrants } from "./grants.js";
import type { PluginHost } from "./host.js";

/** A host-side bound on one `llm.complete`, streamed or not (every wait has a timeout). */
export const LLM_COMPLETE_TIMEOUT_MS = 300_000;

/**
 * Service calls one plugin may have running at once. The peer dispatches every request at once,
 * so without a bound a plugin could start any number of completions; beyond it the call is
 * answered -32012 (overloaded) and the plugin may retry.
 */
export const DEFAULT_MAX_CONCURRENT_SERVICE_CALLS = 16;

/** How providers are found by name; the engine's ProviderRegistry fits. */
export interface ProviderLookup {
  get(id: string): LlmProvider | undefined;
}

export interface PluginServiceDeps {
  /** Long-term memory; absent → `memory.recall` answers -32603 "memory not configured". */
  memory?: AgentMemory;
  /** LLM providers; absent → `llm.complete` answers -32603 "llm not configured". */
  providers?: ProviderLookup;
  /** Default: no grants at all. */
  grants?: PluginGrants;
  llmTimeoutMs?: number;
  /** Default 16. */
  maxConcurrentCalls?: number;
}

/**
 * Serves the plugin's `memory.recall` and `llm.complete` on every incarnation; their params are
 * checked against the contract (-32602) before a service runs. Returns the remover, after which
 * the current incarnation answers both -32601.
 */
export function attachPluginServices(
  host: Pick<PluginHost, "id" | "attach">,
  deps: PluginServiceDeps,
): () => void {
  const services = new PluginServices(host.id, deps);
  let current: Disposer[] = [];
  const detach = host.attach((peer) => {
    const dispatcher = new Dispatcher(peer, { requests: plugin.pluginChildMethods });
    current = [
      dispatcher.handle("memory.recall", (params) => services.bounded(() => services.recall(params))),
      dispatcher.handle("llm.complete", (params, ctx) =>
        services.bounded(() => services.complete(params, ctx)),
      ),
    ];
  });
  return () => {
    detach();
    for (const dispose of current.splice(0)) dispose();
  };
}

export class PluginServices {
  private readonly grants: PluginGrants;
  private readonly maxConcurrent: number;
  private running = 0;

  constructor(
    private readonly pluginId: string,
    private readonly deps: PluginServiceDeps,
  ) {
    this.grants = deps.grants ?? NO_GRANTS;
    this.maxConcurrent = deps.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_SERVICE_CALLS;
  }

  /** Runs `call` unless the plugin already has the maximum of service calls running (-32012). */
  async bounded<T>(call: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxConcurrent) {
      throw new RpcError(
        PluginHostCode.overloaded,
        `overloaded: plugin "${this.pluginId}" already has ${this.running} service calls running; retry later`,
        { plugin_id: this.pluginId, limit: this.maxConcurrent },
      );
    }
    this.running += 1;
    try {
      return await call();
    } finally {
      this.running -= 1;
    }
  }

  async recall(input: plugin.MemoryRecallParams): Promise<plugin.MemoryRecallResult> {
    checkMemoryGrant(this.grants, this.pluginId, input.agent_id);
    const memory = this.deps.memory;
    if (memory === undefined) {
      throw new InternalError("memory not configured: long-term memory is not enabled on this daemon", {
        reason: "memory_not_configured",
      });
    }
    const limit = Math.min(input.limit, plugin.MEMORY_RECALL_MAX_LIMIT);
    let entries: Awaited<ReturnType<AgentMemory["recall"]>>;
    try {
      entries = limit === 0 ? [] : await memory.recall(input.agent_id, input.query, limit);
    } catch (error) {
      throw new InternalError(`memory backend failed: ${(error as Error).message}`, {
        reason: "memory_failed",
      });
    }
    return {
      entries: entries.slice(0, limit).map((entry) => ({
        id: entry.id,
        agent_id: entry.agentId,
        content: entry.content,
        tags: entry.tags,
        concept_tags: entry.conceptTags,
        created_at: entry.createdAt,
        memory_type: null,
      })),
    };
  }

  async complete(input: plugin.LlmCompleteParams, ctx: RequestContext): Promise<plugin.LlmCompleteResult> {
    checkProviderGrant(this.grants, this.pluginId, input.provider);
    const providers = this.deps.providers;
    if (providers === undefined) {
      throw new InternalError("llm not configured: no LLM providers are available to plugins", {
        reason: "llm_not_configured",
      });
    }
    const provider = providers.get(input.provider);
    if (provider === undefined) {
      throw new InternalError(`unknown LLM provider "${input.provider}"`, {
        reason: "unknown_provider",
        provider: input.provider,
      });
    }
    const request = oneShotRequest({
      model: input.model,
      ...(input.system_prompt === undefined ? {} : { systemPrompt: input.system_prompt }),
      messages: input.messages,
      maxTokens: Math.min(input.max_tokens, plugin.LLM_COMPLETE_MAX_TOKENS_CAP),
      temperature: input.temperature,
      signal: AbortSignal.any([
        ctx.signal,
        AbortSignal.timeout(this.deps.llmTimeoutMs ?? LLM_COMPLETE_TIMEOUT_MS),
      ]),
    });
    if (request === undefined) {
      throw new InvalidParamsError("invalid llm.complete params: messages holds only system messages");
    }
    const streaming = input.stream === true;
    let outcome: OneShotResult;
    try {
      // Awaited, so a child that reads slowly slows the provider instead of growing a buffer.
      outcome = await runOneShot(
        provider,
        request,
        streaming ? (chunk) => ctx.sendDelta("llm.complete.delta", { chunk }) : undefined,
      );
    } catch (error) {
      const code = error instanceof RpcError ? error.code : undefined;
      throw new InternalError(`llm.complete failed: ${(error as Error).message}`, {
        reason: "provider_failed",
        provider: input.provider,
        ...(code === undefined ? {} : { provider_code: code }),
      });
    }
    const { content, toolCalls, usage, stop } = outcome;
    if (content === "" && toolCalls > 0) {
      throw new MethodNotFoundError(
        "not_implemented: the provider answered with tool calls only; llm.complete returns text",
        { provider: input.provider },
      );
    }
    const result = {
      finish_reason: finishReasonOf(stop),
      usage: { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens },
    };
    return streaming ? result : { content, ...result };
  }
}

/** Our stop reasons as §5.3's `stop` / `length` / `tool_use` / `other:<reason>`. */
function finishReasonOf(stop: StopReason): plugin.LlmCompleteFinishReason {
  switch (stop) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
      return "length";
    case "tool_use":
      return "tool_use";
    default:
      return `other:${stop}`;
  }
}
