/**
 * The host side of a scenario: each action of `host` run against the real PluginManager, its
 * wrappers and the broker, with every expectation checked as it comes. A failed expectation
 * throws ExpectationError naming the action and every mismatch.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { createEvent } from "../../../../src/broker/event.js";
import type { ChatRequest, ProviderEvent, ToolContext } from "../../../../src/engine/types.js";
import type { PluginHost } from "../../../../src/extensions/plugins/host.js";
import { PluginLlmProvider } from "../../../../src/extensions/plugins/llm.js";
import { invokePluginTool } from "../../../../src/extensions/plugins/tool.js";
import type { ScenarioEnvironment } from "./environment.js";
import { match, show } from "./match.mjs";
import { observe } from "./observe.js";
import { completionOutcome, errorOutcome, hookOutcome, type Outcome, toolOutputOutcome } from "./outcomes.js";
import type { HostAction } from "./scenario.js";

export class ExpectationError extends Error {
  constructor(index: number, action: HostAction, problems: string[]) {
    super(`host action ${index} (${action.do}): ${problems.join("; ")}`);
    this.name = "ExpectationError";
  }
}

type Call = Extract<
  HostAction,
  {
    do:
      | "invoke_tool"
      | "channel_start"
      | "channel_stop"
      | "channel_send"
      | "llm_chat"
      | "hook"
      | "vector_upsert"
      | "vector_search"
      | "vector_delete";
  }
>;
interface Running {
  started: number;
  outcome: Promise<Outcome>;
}

const DEFAULT_WAIT_MS = 5_000;
const PUBLISH_BATCH = 100;

export class HostScript {
  private readonly env: ScenarioEnvironment;
  private readonly running = new Map<string, Running>();
  private index = -1;

  constructor(env: ScenarioEnvironment) {
    this.env = env;
  }

  async run(actions: readonly HostAction[]): Promise<void> {
    for (const [index, action] of actions.entries()) {
      this.index = index;
      await this.perform(action);
    }
    if (this.running.size > 0) {
      throw new Error(`background calls never awaited: ${[...this.running.keys()].join(", ")}`);
    }
  }

  private check(action: HostAction, expected: unknown, actual: unknown, path: string): void {
    if (expected === undefined) return;
    const problems = match(expected, actual, path);
    if (problems.length > 0) throw new ExpectationError(this.index, action, problems);
  }

  private async perform(action: HostAction): Promise<void> {
    const { env } = this;
    switch (action.do) {
      case "start": {
        const started = Date.now();
        await env.manager.start();
        env.addNextHook();
        this.check(action, action.elapsed_ms, Date.now() - started, "elapsed_ms");
        this.check(action, action.expect, observe(env), "$");
        return;
      }
      case "stop": {
        const started = Date.now();
        await env.manager.stop("scenario requested");
        this.check(action, action.elapsed_ms, Date.now() - started, "elapsed_ms");
        this.check(action, action.expect, observe(env), "$");
        return;
      }
      case "publish": {
        const payload = action.payload ?? { text: "x".repeat(action.payload_bytes ?? 5) };
        for (let i = 0; i < (action.count ?? 1); i++) {
          env.broker.publish(
            action.topic,
            createEvent({
              topic: action.topic,
              source: action.source ?? "conformance",
              payload,
              ...(action.session_id === undefined ? {} : { session_id: action.session_id }),
            }),
          );
          // A burst bigger than the broker's own subscriber queue would be dropped by the broker
          // before the bridge sees it; yielding lets its subscribers take each batch.
          if (i % PUBLISH_BATCH === PUBLISH_BATCH - 1) await new Promise((resolve) => setImmediate(resolve));
        }
        return;
      }
      case "await": {
        const running = this.running.get(action.as);
        if (running === undefined) throw new Error(`await of unknown call "${action.as}"`);
        this.running.delete(action.as);
        const outcome = await running.outcome;
        this.check(action, action.elapsed_ms, Date.now() - running.started, "elapsed_ms");
        this.check(action, action.expect, outcome, "$");
        return;
      }
      case "sleep":
        await sleep(action.ms);
        return;
      case "expect":
        this.check(action, action.state, observe(env), "$");
        return;
      case "wait_for": {
        const deadline = Date.now() + (action.timeout_ms ?? DEFAULT_WAIT_MS);
        for (;;) {
          const problems = match(action.state, observe(env));
          if (problems.length === 0) return;
          if (Date.now() > deadline)
            throw new ExpectationError(this.index, action, ["timed out", ...problems]);
          await sleep(10);
        }
      }
      case "expect_log": {
        const found = env.logs.filter(
          (entry) =>
            (action.level === undefined || entry.level === action.level) &&
            (action.message === undefined || match(action.message, entry.message).length === 0) &&
            (action.fields === undefined || match(action.fields, entry.fields).length === 0),
        );
        const problems = match(action.count ?? { $gte: 1 }, found.length, "count");
        if (problems.length > 0) {
          const levels = env.logs.map((entry) => `${entry.level}: ${entry.message} ${show(entry.fields)}`);
          throw new ExpectationError(this.index, action, [...problems, `log:\n${levels.join("\n")}`]);
        }
        return;
      }
      default:
        return this.call(action);
    }
  }

  private async call(action: Call): Promise<void> {
    const started = Date.now();
    const outcome = this.outcomeOf(action).catch(errorOutcome);
    if (action.background) {
      if (action.as === undefined) throw new Error(`a background ${action.do} needs "as"`);
      // Settled later by `await`; the catch above means it never rejects unobserved.
      this.running.set(action.as, { started, outcome });
      return;
    }
    const result = await outcome;
    this.check(action, action.elapsed_ms, Date.now() - started, "elapsed_ms");
    this.check(action, action.expect, result, "$");
  }

  private host(): PluginHost {
    const id = this.env.scenario.manifest.plugin.id;
    const host = this.env.manager.host(id);
    if (host === undefined) throw new Error(`plugin "${id}" has no host (its manifest did not load)`);
    return host;
  }

  private async outcomeOf(action: Call): Promise<Outcome> {
    const { registries } = this.env;
    switch (action.do) {
      case "invoke_tool": {
        if (action.via === "registry") {
          const output = await registries.tools.invoke(
            action.tool,
            action.args as Record<string, unknown>,
            toolContext(action.agent_id),
          );
          return toolOutputOutcome(output);
        }
        const result = await invokePluginTool(this.host(), action.tool, action.args, {
          agentId: action.agent_id ?? null,
        });
        return { result };
      }
      case "channel_start":
        await registries.channels.require(action.kind).start({ instance: action.instance ?? null });
        return { result: { ok: true } };
      case "channel_stop":
        await registries.channels.require(action.kind).stop();
        return { result: { ok: true } };
      case "channel_send": {
        const receipt = await registries.channels
          .require(action.kind)
          .sendOutbound(
            action.msg as Parameters<ReturnType<typeof registries.channels.require>["sendOutbound"]>[0],
          );
        return { result: { message_id: receipt.messageId, sent_at_unix: receipt.sentAtUnix } };
      }
      case "llm_chat": {
        // The registry holds the streaming provider; the synchronous mode is the same wrapper class.
        const provider = action.stream
          ? registries.providers.require(action.provider)
          : new PluginLlmProvider(this.host(), action.provider, { streaming: false });
        const request: ChatRequest = {
          model: action.model,
          ...(action.system === undefined ? {} : { system: action.system }),
          messages: action.messages.map((m) => ({
            role: m.role,
            content: [{ type: "text", text: m.content }],
          })),
          maxTokens: action.max_tokens ?? 1024,
        };
        const events: ProviderEvent[] = [];
        for await (const event of provider.stream(request)) events.push(event);
        return completionOutcome(events);
      }
      case "hook": {
        const before = this.env.nextHookRuns;
        const outcome = await registries.hooks.run(action.point, action.payload, {
          agentId: action.agent_id ?? "agent_conf",
          sessionId: action.session_id ?? "session_conf",
        });
        const pluginHandler = `plugin:${this.env.scenario.manifest.plugin.id}:`;
        return hookOutcome(outcome, pluginHandler, this.env.nextHookRuns > before);
      }
      case "vector_upsert": {
        const count = await registries.vectors
          .require(action.backend)
          .upsert(action.collection, action.records as never);
        return { result: { count } };
      }
      case "vector_search": {
        const matches = await registries.vectors
          .require(action.backend)
          .search(action.collection, action.query as never);
        return { result: { matches } };
      }
      case "vector_delete": {
        const count = await registries.vectors.require(action.backend).delete(action.collection, action.ids);
        return { result: { count } };
      }
      default:
        throw new Error(`not a call: ${(action as HostAction).do}`);
    }
  }
}

function toolContext(agentId: string | undefined): ToolContext {
  return {
    signal: new AbortController().signal,
    sessionId: "session_conf",
    agentId: agentId ?? "agent_conf",
    callId: "call_conf",
    workspace: "/nonexistent",
    unconfined: false,
  };
}
