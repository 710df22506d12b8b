/**
 * The json-stream door: one conversation per process, commands on stdin, events on stdout
 * (specs/json-stream-protocol.txt). It owns no turn logic — it parses commands, drives one
 * AgentSession and translates the session's events.
 *
 * Decisions where the spec is open or the reference falls short (docs/json-stream.md):
 * - a `message` while a turn runs is refused with `protocol_error` (not queued, not dropped);
 * - `stop` cancels the turn, which still ends with `tool_cancelled` for every open call and a
 *   `stream_end`; the process keeps serving; `stop` while idle is answered with an `info`;
 * - malformed lines, unknown commands and invalid fields get `protocol_error`; nothing is dropped
 *   silently;
 * - `stream_end.usage` is the usage of that message, not of the session;
 * - stdin EOF finishes the turn in flight (approvals it still needs are denied with "stdin
 *   closed") and then ends the process; SIGTERM cancels it.
 */
import { randomUUID } from "node:crypto";
import { realpath, stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { type FrameProblem, FrameWriter, formatIssues, LineDecoder } from "@nexo/wire";
import * as jsonstream from "@nexo/wire/schemas/jsonstream";
import { imageBlockOfFile } from "../../engine/image-input.js";
import type { AgentSession } from "../../engine/session.js";
import { isInside } from "../../engine/tools/confine.js";
import type { ContentBlock } from "../../engine/types.js";
import type { Logger } from "../../log.js";
import { toWire, wireUsage } from "./translate.js";

type Command = jsonstream.JsonStreamCommand;
type WireEvent = jsonstream.JsonStreamEvent;

export interface JsonStreamDoorOptions {
  input: Readable;
  output: Writable;
  session: AgentSession;
  /** nexo's version, sent in `ready`. */
  version: string;
  /** Whether the session id is announced (sessions are persisted). */
  announceSessionId: boolean;
  /**
   * `ready` is on stdout already: the fast start (cli/agent-fast.ts) wrote it, from the same
   * decisions (start-up.ts), while this door loaded. Default false: `run()` writes it.
   */
  readyWritten?: boolean;
  /** The capabilities object of `ready` and `config_changed`, computed now. */
  capabilities: () => jsonstream.JsonStreamCapabilities;
  /** Applies a `set_config` command; returns a one-line summary for the `info` event. */
  applyConfig?: (command: jsonstream.JsonStreamSetConfigCommand) => string;
  /** Connects an MCP server announced with `add_mcp_server`; resolves with its tool names. */
  addMcpServer?: (command: jsonstream.JsonStreamAddMcpServerCommand) => Promise<string[]>;
  /** Lets Read open attached files that lie outside the workspace (their real paths). */
  attach?: (realPaths: string[]) => void;
  logger: Logger;
  /** How long shutdown waits for a cancelled turn to finish. Default 5 s. */
  shutdownGraceMs?: number;
}

export class JsonStreamDoor {
  private readonly options: JsonStreamDoorOptions;
  private readonly writer: FrameWriter;
  private readonly decoder: LineDecoder;
  private turn: { msgId: string; done: Promise<void> } | undefined;
  private messagesSeen = 0;
  /** Commands are handled one after another, in arrival order. */
  private chain: Promise<void> = Promise.resolve();
  /** No more commands are handled (stdin ended or shutdown began). */
  private closing = false;
  private stopping = false;
  private resolveRun!: () => void;
  private readonly runPromise = new Promise<void>((r) => {
    this.resolveRun = r;
  });

  constructor(options: JsonStreamDoorOptions) {
    this.options = options;
    // Events flow one way, so frames written in the same tick share one write to stdout.
    this.writer = new FrameWriter(options.output, { coalesce: true });
    this.decoder = new LineDecoder({
      frame: (line) => this.enqueue(() => this.onLine(line)),
      problem: (p) => this.enqueue(() => this.onFrameProblem(p)),
    });
  }

  /** Writes `ready`, serves commands until stdin ends or `shutdown` is called. */
  run(): Promise<void> {
    const { session, version, announceSessionId } = this.options;
    if (this.options.readyWritten !== true) {
      this.emit({
        type: "ready",
        version,
        ...(announceSessionId ? { session_id: session.id } : {}),
        capabilities: this.options.capabilities(),
      });
    }
    const { input } = this.options;
    input.on("data", (chunk: Buffer | string) =>
      this.decoder.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk),
    );
    input.on("end", () => {
      this.decoder.end();
      this.enqueue(() => this.finish());
    });
    input.on("error", (error) => {
      this.options.logger.warn({ err: error.message }, "stdin error");
      void this.shutdown("stdin error");
    });
    return this.runPromise;
  }

  /**
   * stdin ended: nobody can send commands any more, but the turn in flight is finished — approvals
   * it still needs are denied with "stdin closed" (calls the mode allows run) — so that
   * `printf '{"type":"message",…}' | nexo agent --json-stream` runs a whole turn. Then `run()` ends.
   * The turn is bounded by its own limits (max_turns, tool and provider timeouts); SIGTERM still
   * cancels it.
   */
  private async finish(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.turn) {
      this.options.session.refuseApprovals("stdin closed");
      await this.turn.done;
    }
    this.options.logger.debug({ reason: "stdin closed" }, "json-stream door closing");
    this.resolveRun();
  }

  /** Cancels the running turn, waits for it (bounded) and ends `run()`. */
  async shutdown(reason: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.closing = true;
    const { session, logger } = this.options;
    if (this.turn) {
      session.cancel(`shutting down: ${reason}`);
      const grace = this.options.shutdownGraceMs ?? 5000;
      const timedOut = await Promise.race([
        this.turn.done.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), grace).unref()),
      ]);
      if (timedOut) logger.warn({ reason, grace }, "turn did not finish within the shutdown grace");
    }
    logger.debug({ reason }, "json-stream door closing");
    this.resolveRun();
  }

  private enqueue(task: () => void | Promise<void>): void {
    this.chain = this.chain.then(task).catch((error: Error) => {
      this.options.logger.error({ err: error.stack }, "json-stream command failed");
      this.emitError("", "internal_error", error.message, false);
    });
  }

  private emit(event: WireEvent): void {
    this.writer.write(event).catch((error: Error) => this.writeFailed(error));
  }

  private writeFailed(error: Error): void {
    this.options.logger.error({ err: error.message }, "cannot write to stdout");
  }

  private emitError(
    msgId: string | null,
    code: jsonstream.JsonStreamErrorCode,
    message: string,
    retryable: boolean,
  ): void {
    this.emit({ type: "error", msg_id: msgId, error: { code, message, retryable } });
  }

  private info(message: string, msgId = ""): void {
    this.emit({ type: "info", msg_id: msgId, message });
  }

  private onFrameProblem(problem: FrameProblem): void {
    const message =
      problem.kind === "oversize"
        ? `command of ${problem.bytes} bytes exceeds the ${problem.maxBytes}-byte limit`
        : "command is not valid UTF-8";
    this.emitError(null, "protocol_error", message, false);
  }

  private async onLine(line: string): Promise<void> {
    if (this.closing) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (error) {
      this.emitError(null, "protocol_error", `malformed JSON: ${(error as Error).message}`, false);
      return;
    }
    const type = (raw as { type?: unknown } | null)?.type;
    const parsed = jsonstream.JsonStreamCommandSchema.safeParse(raw);
    if (!parsed.success) {
      const known = jsonstream.JsonStreamCommandSchema.options.some(
        (o) => (o.shape.type as { value: unknown }).value === type,
      );
      const msgId =
        typeof (raw as { msg_id?: unknown })?.msg_id === "string" ? (raw as { msg_id: string }).msg_id : null;
      const detail = known
        ? `invalid ${String(type)} command: ${formatIssues(parsed.error.issues)}`
        : typeof type === "string"
          ? `Unknown command type: ${type}`
          : "a command must be a JSON object with a string `type`";
      this.emitError(msgId, "protocol_error", detail, false);
      return;
    }
    await this.handle(parsed.data);
  }

  private async handle(command: Command): Promise<void> {
    const { session } = this.options;
    switch (command.type) {
      case "ping":
        this.emit({ type: "pong" });
        return;
      case "message":
        await this.startMessage(command);
        return;
      case "stop":
        if (!this.turn) {
          this.info("nothing to stop: no turn is running");
          return;
        }
        session.cancel("stopped by the client");
        return;
      case "tool_approve":
        if (!session.approve(command.call_id, command.scope)) {
          this.emitError(
            this.turn?.msgId ?? null,
            "protocol_error",
            `no pending tool_request with call_id ${command.call_id}`,
            false,
          );
        }
        return;
      case "tool_deny":
        if (!session.deny(command.call_id, command.reason || "denied by the user")) {
          this.emitError(
            this.turn?.msgId ?? null,
            "protocol_error",
            `no pending tool_request with call_id ${command.call_id}`,
            false,
          );
        }
        return;
      case "init_history":
        if (this.messagesSeen > 0) {
          this.emitError(
            null,
            "protocol_error",
            "init_history is only accepted before the first message",
            false,
          );
          return;
        }
        await session.seedHistory(command.text);
        this.info("history loaded");
        return;
      case "set_mode":
        session.policy.mode = command.mode;
        this.info(`mode updated: ${command.mode}`);
        this.emit({ type: "config_changed", capabilities: this.options.capabilities() });
        return;
      case "set_config": {
        if (!this.options.applyConfig) {
          this.emitError(null, "config_error", "set_config is not supported by this agent", false);
          return;
        }
        try {
          this.info(this.options.applyConfig(command));
          this.emit({ type: "config_changed", capabilities: this.options.capabilities() });
        } catch (error) {
          this.emitError(null, "config_error", (error as Error).message, false);
        }
        return;
      }
      case "add_mcp_server": {
        if (this.messagesSeen > 0) {
          this.emitError(
            null,
            "protocol_error",
            `add_mcp_server '${command.name}': only allowed before the first message`,
            false,
          );
          return;
        }
        if (!this.options.addMcpServer) {
          this.emitError(null, "config_error", "MCP servers are not available in this agent", false);
          return;
        }
        try {
          const tools = await this.options.addMcpServer(command);
          this.emit({ type: "mcp_ready", name: command.name, tools });
        } catch (error) {
          this.emitError(
            null,
            "config_error",
            `MCP server '${command.name}' failed: ${(error as Error).message}`,
            false,
          );
        }
        return;
      }
    }
  }

  private async startMessage(command: jsonstream.JsonStreamMessageCommand): Promise<void> {
    const { session, logger } = this.options;
    if (this.turn) {
      this.emitError(
        command.msg_id,
        "protocol_error",
        `a turn is already running (msg_id ${this.turn.msgId}); wait for its stream_end or send stop`,
        false,
      );
      return;
    }
    this.messagesSeen++;
    const content = await this.messageContent(command);
    const msgId = command.msg_id;
    // The door is one reader of the session's hub: subscribed before the turn starts, so it sees
    // every event of it; the turn itself never waits for stdout.
    const turnId = randomUUID();
    const events = session.hub.subscribe({ turnId });
    const turn = session.startTurn(
      { content, origin: { channel: "json-stream", messageId: msgId } },
      { turnId },
    );
    const done = (async () => {
      try {
        for await (const event of events) {
          if (event.type === "lagged") {
            // stdout fell further behind than the subscription holds: say so, then close the
            // message properly once the turn (which went on and was saved) has ended.
            this.emitError(
              msgId,
              "internal_error",
              `stdout fell too far behind: ${event.dropped} events of this message were dropped; the turn went on and was saved`,
              false,
            );
            const outcome = await turn.done;
            this.emit({ type: "stream_end", msg_id: msgId, usage: wireUsage(outcome.usage) });
            break;
          }
          const wire = toWire(event, msgId);
          // Take the next event only once stdout accepted this one: while the reader lags, the
          // subscription merges text deltas instead of frames piling up here.
          if (wire) await this.writer.write(wire).catch((error: Error) => this.writeFailed(error));
        }
      } catch (error) {
        logger.error({ err: (error as Error).stack }, "turn stream failed");
        this.emitError(msgId, "internal_error", (error as Error).message, false);
        this.emit({ type: "stream_end", msg_id: msgId, usage: { input_tokens: 0, output_tokens: 0 } });
      } finally {
        this.turn = undefined;
      }
    })();
    this.turn = { msgId, done };
  }

  /**
   * The message text plus its attachments: images become image blocks the model can see; other
   * files are listed by path so the model can open them with its tools.
   */
  private async messageContent(command: jsonstream.JsonStreamMessageCommand): Promise<ContentBlock[]> {
    const text = jsonstream.messageCommandText(command);
    const blocks: ContentBlock[] = [];
    const listed: string[] = [];
    const outside: string[] = [];
    const workspace = this.options.session.config.workspace;
    const workspaceReal = await realpath(workspace).catch(() => workspace);
    for (const file of command.files) {
      const path = isAbsolute(file) ? file : resolve(workspace, file);
      const info = await stat(path).catch(() => undefined);
      // AionUi keeps uploads in its own cache directory: the model may Read exactly those files.
      const real = info?.isFile() ? await realpath(path).catch(() => undefined) : undefined;
      if (real !== undefined && !isInside(workspaceReal, real)) outside.push(real);
      const image = info?.isFile() ? await imageBlockOfFile(path) : undefined;
      if (image !== undefined) {
        blocks.push(image);
      } else {
        if (!info) this.info(`attached file not found: ${file}`, command.msg_id);
        listed.push(path);
      }
    }
    if (outside.length > 0) this.options.attach?.(outside);
    const suffix = listed.length > 0 ? `\n\n[Attached files]\n${listed.map((p) => `- ${p}`).join("\n")}` : "";
    return [{ type: "text", text: `${text}${suffix}` }, ...blocks];
  }
}
