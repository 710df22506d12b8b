/**
 * The tools a channel adapter contributes (`channelAdapter.channelTools` at `initialize`), offered
 * to the agent of every thread whose origin channel is the adapter's, for as long as the adapter is
 * connected: a call runs as `ext/channel/toolCall {threadId, turnId, callId, tool, arguments,
 * context}` on the adapter's connection, and its answer (`contentItems`' text, else the
 * `structuredResult` as JSON) is what the model reads; `success: false` is an error result with
 * the adapter's `errorCode` and `errorMessage`.
 *
 * Arguments are checked against the tool's `inputSchema` before the adapter is asked (the engine's
 * registry does it, as for every tool). A tool that declares `approval` asks first, through the
 * thread's approval flow, as the kind says — `file` as a file change, `shell` as a command,
 * `remoteResource` as a remote action — with the `targetArgument`'s value as the target; a tool
 * without one runs as a read (`info`), which the session's policy decides like any other.
 */
import type { ChannelToolDescriptor, SenderContext, ToolCallResult } from "@nexo/wire/schemas/appserver";
import type { ToolHost } from "../../../engine/session-types.js";
import { ToolRegistry } from "../../../engine/tools/registry.js";
import type { Tool, ToolCategory, ToolContext, ToolOutput, ToolSpec } from "../../../engine/types.js";
import type { Logger } from "../../../log.js";
import type { ConnectedAdapter } from "../channel-adapters.js";

/** How long one channel tool call may take before it fails. */
const TOOL_CALL_TIMEOUT_MS = 120_000;

export interface ChannelToolsOptions {
  threadId: string;
  /** The thread's origin channel: whose adapter's tools it gets. */
  channel: string;
  /** The thread's channel context (the chat), passed on in `context.channelContext`. */
  channelContext: string | undefined;
  /** The adapter connected for a channel now. */
  adapterFor: (channel: string) => ConnectedAdapter | undefined;
  /** The running turn's id and sender. */
  turn: () => { turnId: string; sender: SenderContext | undefined } | undefined;
  logger: Logger;
}

const CATEGORY: Record<string, ToolCategory> = { file: "edit", shell: "exec", remoteResource: "mcp" };

/** A thread's view of its channel adapter's tools; empty while no adapter of its channel is connected. */
export class ChannelTools implements ToolHost {
  private built: { adapter: ConnectedAdapter; registry: ToolRegistry } | undefined;

  constructor(private readonly options: ChannelToolsOptions) {}

  get(name: string): Tool | undefined {
    return this.registry()?.get(name);
  }

  specs(filter?: (tool: Tool) => boolean): readonly ToolSpec[] {
    return this.registry()?.specs(filter) ?? [];
  }

  invoke(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    const registry = this.registry();
    if (registry === undefined) {
      return Promise.resolve({
        output: `The ${this.options.channel} channel adapter is not connected.`,
        isError: true,
      });
    }
    return registry.invoke(name, args, ctx);
  }

  /** The adapter's tools in a registry of their own, rebuilt when another adapter connects. */
  private registry(): ToolRegistry | undefined {
    const adapter = this.options.adapterFor(this.options.channel);
    if (adapter === undefined) return undefined;
    if (this.built?.adapter !== adapter) {
      const registry = new ToolRegistry();
      for (const descriptor of adapter.declared.channelTools ?? []) {
        try {
          registry.register(this.tool(adapter, descriptor));
        } catch (error) {
          // A tool the engine cannot offer (a bad name or schema) is left out; the others stay.
          this.options.logger.warn(
            { channel: adapter.name, tool: descriptor.name, error: (error as Error).message },
            "channel tool refused",
          );
        }
      }
      this.built = { adapter, registry };
    }
    return this.built.registry;
  }

  private tool(adapter: ConnectedAdapter, descriptor: ChannelToolDescriptor): Tool {
    const approval = descriptor.approval;
    const title = descriptor.display?.title ?? descriptor.name;
    return {
      name: descriptor.name,
      description: descriptor.description,
      inputSchema: descriptor.inputSchema,
      category: approval === undefined ? "info" : (CATEGORY[approval.kind] ?? "exec"),
      source: "plugin",
      origin: `channel:${adapter.name}`,
      describe: (args) => {
        const target = approval === undefined ? undefined : args[approval.targetArgument];
        return typeof target === "string" ? `${title}: ${target}` : title;
      },
      execute: (args, ctx) => this.call(adapter, descriptor.name, args, ctx),
    };
  }

  private async call(
    adapter: ConnectedAdapter,
    tool: string,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<ToolOutput> {
    const turn = this.options.turn();
    const sender = turn?.sender;
    const result: ToolCallResult = await adapter.connection.request(
      "ext/channel/toolCall",
      {
        threadId: this.options.threadId,
        turnId: turn?.turnId ?? "",
        callId: ctx.callId,
        tool,
        arguments: args,
        context: {
          channelName: adapter.name,
          ...(this.options.channelContext === undefined
            ? {}
            : { channelContext: this.options.channelContext }),
          ...(sender?.senderId ? { senderId: sender.senderId } : {}),
          ...(sender?.groupId ? { groupId: sender.groupId } : {}),
        },
      },
      { timeoutMs: TOOL_CALL_TIMEOUT_MS, signal: ctx.signal },
    );
    const text = (result.contentItems ?? [])
      .map((item) => item.text)
      .filter((part): part is string => typeof part === "string")
      .join("\n");
    if (!result.success) {
      const code = result.errorCode ?? "ChannelToolFailed";
      return {
        output: `${code}: ${result.errorMessage ?? (text || "the channel tool failed")}`,
        isError: true,
      };
    }
    if (text) return { output: text };
    return {
      output: result.structuredResult === undefined ? "(done)" : JSON.stringify(result.structuredResult),
    };
  }
}
