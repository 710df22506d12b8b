/**
 * Microapp tools in the engine's tool registry (source "microapp"): one engine Tool per accepted
 * tool of the catalogue, each call one `tools/call {tool, args, binding_context, inbound}` within
 * the microapp's timeout. `{output}` becomes the tool's output (a string as it is, anything else
 * as JSON); `{error}` — the microapp saying the tool failed — becomes an error output the model
 * reads; a JSON-RPC error, a timeout (the process keeps running) or a microapp that is down
 * become error outputs too, with the reason, so a turn never breaks on a microapp.
 *
 * Category `exec`: a microapp can do anything its process can, so its tools are approved like a
 * command.
 */
import {
  ConnectionClosedError,
  MalformedReplyError,
  RequestCancelledError,
  RpcError,
  TimeoutError,
} from "@nexo/wire";
import type { microapp } from "@nexo/wire/schemas";
import type { ToolRegistry } from "../../engine/tools/registry.js";
import type { Tool, ToolContext, ToolOutput } from "../../engine/types.js";
import { keepCatalogToolsRegistered } from "../catalog-tools.js";
import type { SupervisorLogger } from "../supervisor.js";
import { MicroappUnavailableError } from "./errors.js";
import type { MicroappHost } from "./host.js";

/** Where a call came from, as `tools/call` tells the microapp. */
export interface ToolCallOrigin {
  binding_context: microapp.MicroappBindingContext;
  inbound?: microapp.MicroappInboundRef;
}

/** Finds the binding (agent, channel, account) and the triggering message of a tool call. */
export type OriginResolver = (ctx: ToolContext) => ToolCallOrigin;

/** Without a daemon to ask: the agent alone (turns run from a door have no channel). */
export const agentOnlyOrigin: OriginResolver = (ctx) => ({ binding_context: { agent_id: ctx.agentId } });

type ToolHost = Pick<MicroappHost, "id" | "callTool" | "timeoutMs">;

export class MicroappTool implements Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly category = "exec" as const;
  readonly source = "microapp" as const;

  constructor(
    private readonly host: ToolHost,
    def: microapp.MicroappToolDefinition,
    private readonly callOrigin: OriginResolver,
  ) {
    this.name = def.name;
    this.description = def.description ?? "";
    // `{}` means "any object" to a model; the registry wants the object type spelt out.
    this.inputSchema =
      def.input_schema.type === undefined ? { type: "object", ...def.input_schema } : def.input_schema;
  }

  describe(): string {
    return `${this.name} (microapp ${this.host.id})`;
  }

  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    // Not `async` (every call of every microapp tool passes here): the host's promise is mapped
    // once, with no promise of its own around it; a resolver that throws is an error output too.
    let reply: Promise<microapp.MicroappToolCallResult>;
    try {
      const origin = this.callOrigin(ctx);
      // Built field by field: a spread of the origin takes V8's slow path on every call.
      const params: microapp.MicroappToolCallParams = {
        tool: this.name,
        args,
        binding_context: origin.binding_context,
      };
      if (origin.inbound !== undefined) params.inbound = origin.inbound;
      reply = this.host.callTool(params, { signal: ctx.signal });
    } catch (error) {
      reply = Promise.reject(error);
    }
    // Inline arrows, no named closure per call (under a loader that keeps function names each
    // costs an Object.defineProperty, docs/performance.md).
    return reply.then(
      (result) => this.outputOf(result),
      (error: unknown) => this.failureOutput(error),
    );
  }

  private outputOf(result: microapp.MicroappToolCallResult): ToolOutput {
    if (result.error !== undefined) return this.failedOutput(`${this.name} failed: ${result.error}`);
    const output = result.output;
    try {
      return {
        output: typeof output === "string" ? output : (JSON.stringify(output, null, 2) ?? "null"),
        metadata: { microapp_id: this.host.id },
      };
    } catch (error) {
      return this.failureOutput(error);
    }
  }

  /** An error output the model reads, the microapp named in metadata. */
  private failedOutput(output: string): ToolOutput {
    return { output, isError: true, metadata: { microapp_id: this.host.id } };
  }

  /** A call that failed (no reply, an error reply, a malformed one, …) as an error output. */
  private failureOutput(error: unknown): ToolOutput {
    return this.failedOutput(`${this.name}: ${this.describeFailure(error)}`);
  }

  private describeFailure(error: unknown): string {
    if (error instanceof TimeoutError)
      return `no reply from microapp ${this.host.id} within ${error.timeoutMs} ms (the call was abandoned; the microapp keeps running)`;
    if (error instanceof RpcError)
      return `microapp ${this.host.id} answered error ${error.code}: ${error.message}`;
    if (error instanceof ConnectionClosedError)
      return `microapp ${this.host.id} stopped during the call (${error.reason})`;
    if (error instanceof RequestCancelledError) return "cancelled";
    if (error instanceof MicroappUnavailableError || error instanceof MalformedReplyError)
      return error.message;
    return `failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Registers the running microapp's accepted tools into `registry` and keeps them in step with each
 * new incarnation and each changed `tools/list`. A tool the registry refuses (a clash with another
 * source, a schema that does not compile) is left out with a warning. Returns the remover.
 */
export function registerMicroappTools(
  host: ToolHost & Pick<MicroappHost, "session" | "on" | "off">,
  registry: ToolRegistry,
  origin: OriginResolver,
  logger: SupervisorLogger,
): () => void {
  return keepCatalogToolsRegistered(
    {
      kind: "microapp",
      id: host.id,
      current: () => host.session?.catalog.tools.values(),
      toTool: (def) => new MicroappTool(host, def, origin),
      subscribe: (sync) => {
        host.on("ready", sync);
        host.on("tools", sync);
        return () => {
          host.off("ready", sync);
          host.off("tools", sync);
        };
      },
    },
    registry,
    logger,
  );
}
