/**
 * The conversation loop of `nexo chat`: read a line, run it as a turn (or a slash command), show the
 * turn as it streams, ask the person when a tool needs approval.
 *
 * Input is Node's readline: line editing, and on a terminal the history under the arrow keys (kept
 * between chats in the state dir). Lines are consumed strictly in order — a turn takes one, an
 * approval question takes the next — so piped input (`printf 'write a.txt: hi\nonce\n' | nexo chat`)
 * behaves exactly like typing.
 *
 * Keys: Ctrl-C stops the running turn (at the prompt it clears the line); Ctrl-D leaves once the
 * running turn has finished, as the end of piped input does.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface, type Interface } from "node:readline";
import type { ApprovalDecision, ApprovalRequestParams, Item } from "@nexo/wire/schemas/appserver";
import type { ChatClient, ChatView } from "./client.js";
import type { TurnRenderer } from "./render.js";

export interface ReplOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** A person at a terminal: prompts, history, Ctrl-C handled by readline. */
  terminal: boolean;
  renderer: TurnRenderer;
  /** Where the arrow-key history is kept (terminal only). */
  historyFile?: string;
}

const HISTORY_SIZE = 500;

const HELP = `commands:
  /help            this list
  /new             start a new thread (the agent forgets this conversation)
  /model [ID]      show the model and the ones offered, or switch this thread to ID
  /thread          this thread's id (nexo chat --resume ID continues it later)
  /quit            leave (Ctrl-D too)
keys: Ctrl-C stops a running turn; arrow keys browse what you typed before.
approvals: answer o (once), s (this session), a (always), d (deny).`;

/** Answers to an approval question, by what a person may type. */
const DECISIONS: Record<string, ApprovalDecision> = {
  o: "accept",
  once: "accept",
  y: "accept",
  yes: "accept",
  s: "acceptForSession",
  session: "acceptForSession",
  a: "acceptAlways",
  always: "acceptAlways",
  d: "decline",
  deny: "decline",
  n: "decline",
  no: "decline",
};

/** Lines in arrival order; `next()` resolves undefined once input has ended. */
class LineQueue {
  private readonly lines: string[] = [];
  private readonly waiters: Array<(line: string | undefined) => void> = [];
  private ended = false;

  push(line: string): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(line);
    else this.lines.push(line);
  }

  end(): void {
    this.ended = true;
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }

  next(): Promise<string | undefined> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

export class ChatRepl implements ChatView {
  private readonly rl: Interface;
  private readonly queue = new LineQueue();
  private readonly renderer: TurnRenderer;
  private client: ChatClient | undefined;

  constructor(private readonly options: ReplOptions) {
    this.renderer = options.renderer;
    this.rl = createInterface({
      input: options.input,
      output: options.terminal ? options.output : undefined,
      terminal: options.terminal,
      historySize: HISTORY_SIZE,
      history: options.terminal ? loadHistory(options.historyFile) : [],
      removeHistoryDuplicates: true,
    });
    this.rl.on("line", (line) => this.queue.push(line));
    this.rl.on("close", () => this.queue.end());
    if (options.terminal && options.historyFile !== undefined) {
      const file = options.historyFile;
      this.rl.on("history", (history: string[]) => saveHistory(file, history));
    }
    // On a terminal readline turns Ctrl-C into this event instead of a signal.
    this.rl.on("SIGINT", () => this.interruptKey());
  }

  /** Runs until the person leaves or the input ends; resolves when the last turn is done. */
  async run(client: ChatClient): Promise<void> {
    this.client = client;
    for (;;) {
      this.prompt("you> ");
      const line = await this.queue.next();
      if (line === undefined) return;
      const text = line.trim();
      if (text === "") continue;
      if (text.startsWith("/")) {
        if ((await this.command(text)) === "quit") return;
        continue;
      }
      await this.turn(text);
    }
  }

  /** Ctrl-C: stop the turn if one runs, else clear what is being typed. */
  interruptKey(): void {
    if (this.client?.turnRunning) {
      this.renderer.line(this.renderer.style("dim", "(stopping the turn…)"));
      this.client
        .interrupt()
        .catch((error: Error) => this.renderer.line(`could not stop the turn: ${error.message}`));
      return;
    }
    if (this.options.terminal && this.rl.line !== "") {
      this.rl.write(null, { ctrl: true, name: "u" });
      return;
    }
    this.renderer.line(this.renderer.style("dim", "(Ctrl-D or /quit leaves)"));
    this.prompt("you> ");
  }

  close(): void {
    this.rl.close();
  }

  // --- ChatView ---------------------------------------------------------------------------------

  agentDelta(text: string): void {
    this.renderer.agentDelta(text);
  }

  reasoningDelta(text: string): void {
    this.renderer.reasoningDelta(text);
  }

  commandOutput(text: string): void {
    this.renderer.commandOutput(text);
  }

  itemStarted(item: Item): void {
    this.renderer.itemStarted(item);
  }

  itemCompleted(item: Item): void {
    this.renderer.itemCompleted(item);
  }

  async approve(request: ApprovalRequestParams): Promise<ApprovalDecision> {
    const what =
      request.approvalType === "file" ? `${request.operation} ${request.target}` : request.operation;
    this.renderer.line(
      `${this.renderer.style(["bold", "yellow"], `approve ${request.approvalType}:`)} ${what}${
        request.reason ? this.renderer.style("dim", ` — ${request.reason}`) : ""
      }`,
    );
    for (;;) {
      this.prompt("allow? [o]nce / [s]ession / [a]lways / [d]eny: ");
      const answer = await this.queue.next();
      // Input ended: nobody can say yes.
      if (answer === undefined) return "decline";
      const decision = DECISIONS[answer.trim().toLowerCase()];
      if (decision !== undefined) return decision;
      this.renderer.line("answer o, s, a or d");
    }
  }

  // --- the loop's steps -------------------------------------------------------------------------

  private async turn(text: string): Promise<void> {
    const client = this.client!;
    try {
      const outcome = await client.turn(text);
      this.renderer.endTurn();
      if (outcome.status === "failed") {
        this.renderer.line(this.renderer.style("red", `the turn failed: ${outcome.error}`));
      } else if (outcome.status === "cancelled") {
        this.renderer.line(this.renderer.style("dim", `(turn stopped: ${outcome.reason})`));
      }
    } catch (error) {
      this.renderer.endTurn();
      this.renderer.line(this.renderer.style("red", `could not run the turn: ${(error as Error).message}`));
    }
  }

  private async command(text: string): Promise<"quit" | undefined> {
    const client = this.client!;
    const [name, ...rest] = text.slice(1).split(/\s+/);
    const arg = rest.join(" ").trim();
    try {
      switch (name) {
        case "help":
        case "?":
          this.renderer.line(HELP);
          return;
        case "quit":
        case "exit":
          return "quit";
        case "new": {
          const thread = await client.newThread(client.currentThread?.model);
          this.renderer.line(this.renderer.style("dim", `new thread ${thread.id}`));
          return;
        }
        case "thread":
          this.renderer.line(`thread ${client.currentThread?.id ?? "(none)"}`);
          return;
        case "model": {
          if (arg === "") {
            const offered = await client.offeredModels();
            const current = client.currentThread?.model ?? "the server's default";
            this.renderer.line(
              `model: ${current}${offered === undefined ? "" : `\noffered: ${offered.join(", ") || "(none named)"}`}`,
            );
            return;
          }
          await client.setModel(arg);
          this.renderer.line(this.renderer.style("dim", `this thread now uses ${arg}`));
          return;
        }
        default:
          this.renderer.line(`unknown command /${name} — /help lists them`);
          return;
      }
    } catch (error) {
      this.renderer.line(this.renderer.style("red", `/${name}: ${(error as Error).message}`));
      return;
    }
  }

  private prompt(text: string): void {
    if (!this.options.terminal) return;
    this.rl.setPrompt(this.renderer.style("bold", text));
    this.rl.prompt();
  }
}

function loadHistory(file: string | undefined): string[] {
  if (file === undefined) return [];
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).slice(0, HISTORY_SIZE);
  } catch {
    return [];
  }
}

/** Most recent first, as readline keeps it; private to the user (it may hold anything they typed). */
function saveHistory(file: string, history: readonly string[]): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${history.join("\n")}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch {
    // A history that cannot be saved must not end the chat.
  }
}
