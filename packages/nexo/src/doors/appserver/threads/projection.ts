/**
 * One turn's engine events → AppServer items and notifications. The engine decides everything; this
 * file only gives each piece its item, its id and its wire name:
 *
 *   text_delta      agentMessage (one item per run of text between tool calls) + item/agentMessage/delta
 *   thinking        reasoningContent (likewise) + item/reasoning/delta
 *   tool_requested  toolCall (started, then completed with its arguments); fileChange for Write/Edit
 *   tool_running    commandExecution for Bash; toolExecution for every call
 *   tool_output_delta  the command's aggregatedOutput + item/commandExecution/outputDelta
 *   tool_result     toolResult; completes commandExecution (exit code, duration from the typed
 *                   result), toolExecution and fileChange (with its diff)
 *   tool_cancelled  toolResult (failed); the others end cancelled / declined
 *   error           error item (fatal: the turn fails)
 *   usage           item/usage/delta
 *
 * The turn keeps every item in its final state, so `item/completed` and `turn/completed.turn.items`
 * carry full text. Approvals are added by the runtime (approvals.ts) through `addItem`.
 */
import type {
  AppServerNotificationName,
  AppServerNotificationParams,
  Item,
  TokenUsage,
  Turn,
  TurnStatus,
} from "@nexo/wire/schemas/appserver";
import type { TurnEvent, TurnFailure } from "../../../engine/events.js";
import { isoTime } from "../../../iso-time.js";
import { fileChangeOfResult, plannedFileChange } from "./file-changes.js";
import { itemId } from "./history.js";

export type Emit = <M extends AppServerNotificationName>(
  method: M,
  params: AppServerNotificationParams<M>,
) => void;

/** Items without the envelope the projector adds. */
export type ItemBody = Pick<Item, "type" | "payload">;

interface OpenCall {
  name: string;
  args: Record<string, unknown>;
  toolExecution?: Item;
  commandExecution?: Item;
  fileChange?: Item;
}

const now = (): string => isoTime();

/** The error item's machine-readable code for an engine failure. */
function errorCode(failure: TurnFailure): string {
  return failure === "provider" ? "provider_error" : "internal_error";
}

export class TurnProjector {
  readonly turn: Turn & { items: Item[]; status: TurnStatus };
  private open: Item | undefined;
  private readonly calls = new Map<string, OpenCall>();
  /** toolCall items started by argument fragments, completed when the call is requested whole. */
  private readonly streamingCalls = new Map<string, Item>();
  private failure: string | undefined;

  constructor(
    turn: Turn,
    private readonly workspace: string,
    private readonly emit: Emit,
  ) {
    this.turn = { ...turn, items: turn.items ?? [], status: turn.status };
  }

  get threadId(): string {
    return this.turn.threadId;
  }

  /** The failure text of the first fatal error, if the turn had one. */
  get error(): string | undefined {
    return this.failure;
  }

  /** Records an item that is born complete without announcing it (the caller does). */
  record(body: ItemBody): Item {
    return this.newItem(body, "completed");
  }

  /** Adds an item that is born complete (`item/started` then `item/completed`). */
  addItem(body: ItemBody): Item {
    const item = this.newItem(body, "completed");
    this.emit("item/started", { threadId: this.threadId, turnId: this.turn.id, item });
    this.emit("item/completed", { threadId: this.threadId, turnId: this.turn.id, item });
    return item;
  }

  /** Starts an item that completes later (`complete`). */
  startItem(body: ItemBody): Item {
    const item = this.newItem(body, "started");
    this.emit("item/started", { threadId: this.threadId, turnId: this.turn.id, item });
    return item;
  }

  complete(item: Item, payload: Item["payload"]): void {
    Object.assign(item, { status: "completed", completedAt: now(), payload });
    this.emit("item/completed", { threadId: this.threadId, turnId: this.turn.id, item });
  }

  /** Ends the text or reasoning item in progress, if any. */
  closeOpen(): void {
    const item = this.open;
    if (!item) return;
    this.open = undefined;
    this.complete(item, item.payload);
  }

  event(event: TurnEvent): void {
    const { threadId } = this;
    const turnId = this.turn.id;
    switch (event.type) {
      case "text_delta":
      case "reasoning_delta": {
        if (event.text === "") return;
        const type = event.type === "text_delta" ? "agentMessage" : "reasoningContent";
        if (this.open?.type !== type) {
          this.closeOpen();
          this.open = this.startItem({ type, payload: { text: "" } } as ItemBody);
        }
        const item = this.open!;
        (item.payload as { text: string }).text += event.text;
        if (type === "agentMessage") {
          this.emit("item/agentMessage/delta", {
            threadId,
            turnId,
            itemId: item.id,
            deltaKind: "agentMessage",
            delta: event.text,
          });
        } else {
          this.emit("item/reasoning/delta", {
            threadId,
            turnId,
            itemId: item.id,
            deltaKind: "reasoningContent",
            delta: event.text,
          });
        }
        return;
      }
      case "tool_args_delta": {
        // The item starts with the first fragment so the fragments can name it; the name and
        // call id ride only on that first one (as DotCraft's clients expect).
        let item = this.streamingCalls.get(event.callId);
        const first = item === undefined;
        if (item === undefined) {
          this.closeOpen();
          item = this.startItem({
            type: "toolCall",
            payload: { toolName: event.name, arguments: {}, callId: event.callId },
          });
          this.streamingCalls.set(event.callId, item);
        }
        if (event.delta === "") return;
        this.emit("item/toolCall/argumentsDelta", {
          threadId,
          turnId,
          itemId: item.id,
          deltaKind: "toolCallArguments",
          delta: event.delta,
          ...(first ? { toolName: event.name, callId: event.callId } : {}),
        });
        return;
      }
      case "tool_requested": {
        this.closeOpen();
        const call: OpenCall = { name: event.name, args: event.args };
        this.calls.set(event.callId, call);
        const payload = { toolName: event.name, arguments: event.args, callId: event.callId };
        const toolCall =
          this.streamingCalls.get(event.callId) ?? this.startItem({ type: "toolCall", payload });
        this.streamingCalls.delete(event.callId);
        this.complete(toolCall, payload);
        const planned = plannedFileChange(event.name, event.args);
        if (planned) {
          call.fileChange = this.startItem({
            type: "fileChange",
            payload: { callId: event.callId, changes: [planned], status: "inProgress" },
          });
        }
        return;
      }
      case "tool_running": {
        const call = this.calls.get(event.callId);
        if (!call) return;
        call.toolExecution = this.startItem({
          type: "toolExecution",
          payload: { callId: event.callId, toolName: event.name, status: "inProgress" },
        });
        if (event.name === "Bash" && typeof call.args.command === "string") {
          call.commandExecution = this.startItem({
            type: "commandExecution",
            payload: {
              command: call.args.command,
              workingDirectory: this.workspace,
              source: "host",
              status: "inProgress",
              aggregatedOutput: "",
              callId: event.callId,
            },
          });
        }
        return;
      }
      case "tool_result": {
        const call = this.calls.get(event.callId);
        const success = event.status === "success";
        this.addItem({
          type: "toolResult",
          payload: { callId: event.callId, result: event.output, success },
        });
        if (!call) return;
        const durationMs = Math.round(event.durationMs);
        if (call.commandExecution) {
          const run = event.detail?.kind === "command" ? event.detail : undefined;
          this.complete(call.commandExecution, {
            ...(call.commandExecution.payload as object),
            status: success ? "completed" : "failed",
            aggregatedOutput: event.output,
            ...(typeof run?.exitCode === "number" ? { exitCode: run.exitCode } : {}),
            ...(run ? { workingDirectory: run.cwd } : {}),
            durationMs,
          } as Item["payload"]);
        }
        if (call.toolExecution) {
          this.complete(call.toolExecution, {
            callId: event.callId,
            toolName: call.name,
            status: success ? "completed" : "failed",
            success,
            durationMs,
            resultPreview: event.output.slice(0, 4096),
          });
        }
        if (call.fileChange) {
          const change = success ? fileChangeOfResult(call.args, event) : undefined;
          const payload = call.fileChange.payload as { callId: string; changes: unknown[] };
          this.complete(call.fileChange, {
            callId: payload.callId,
            changes: change ? [change] : payload.changes,
            status: success ? "completed" : "failed",
          } as Item["payload"]);
        }
        this.calls.delete(event.callId);
        return;
      }
      case "tool_output_delta": {
        const item = this.calls.get(event.callId)?.commandExecution;
        if (!item || event.text === "") return;
        (item.payload as { aggregatedOutput: string }).aggregatedOutput += event.text;
        this.emit("item/commandExecution/outputDelta", {
          threadId,
          turnId,
          itemId: item.id,
          delta: event.text,
        });
        return;
      }
      case "tool_cancelled": {
        const call = this.calls.get(event.callId);
        this.addItem({
          type: "toolResult",
          payload: { callId: event.callId, result: event.reason, success: false },
        });
        if (!call) return;
        if (call.commandExecution) {
          this.complete(call.commandExecution, {
            ...(call.commandExecution.payload as object),
            status: "cancelled",
          } as Item["payload"]);
        }
        if (call.toolExecution) {
          this.complete(call.toolExecution, {
            callId: event.callId,
            toolName: call.name,
            status: "cancelled",
            success: false,
            errorMessage: event.reason,
          });
        }
        if (call.fileChange) {
          this.complete(call.fileChange, {
            ...(call.fileChange.payload as object),
            status: "declined",
          } as Item["payload"]);
        }
        this.calls.delete(event.callId);
        return;
      }
      case "error": {
        this.closeOpen();
        this.failure ??= event.message;
        this.addItem({
          type: "error",
          payload: { message: event.message, code: errorCode(event.failure), fatal: true },
        });
        return;
      }
      case "usage": {
        const usage: TokenUsage = {
          inputTokens: event.turn.inputTokens,
          outputTokens: event.turn.outputTokens,
          totalTokens: event.turn.inputTokens + event.turn.outputTokens,
        };
        this.turn.tokenUsage = usage;
        this.emit("item/usage/delta", {
          threadId,
          turnId,
          inputTokens: event.turn.inputTokens,
          outputTokens: event.turn.outputTokens,
          totalInputTokens: event.session.inputTokens,
          totalOutputTokens: event.session.outputTokens,
        });
        return;
      }
      case "turn_start":
      case "message_start":
      case "message_end":
      case "reasoning_start":
      case "reasoning_end":
      case "approval_resolved":
      case "compaction":
      case "step_usage":
      case "subagent_started":
      case "subagent_progress":
      case "info":
      case "turn_end":
        return;
    }
  }

  private newItem(body: ItemBody, status: Item["status"]): Item {
    const item = {
      id: itemId(this.turn.items.length + 1),
      turnId: this.turn.id,
      type: body.type,
      status,
      createdAt: now(),
      ...(status === "completed" ? { completedAt: now() } : {}),
      payloadKind: body.type,
      payload: body.payload,
    } as Item;
    this.turn.items.push(item);
    return item;
  }
}
