/**
 * Talking to the test daemon's agent the way a client does: the daemon's AppServer WebSocket
 * (appserver.yaml), a thread per question, the turn's items read from `turn/completed`. Tool
 * approvals the daemon asks for are answered by `approve` (accept by default), so a microapp's
 * tool — `exec` category, asked before it runs — really goes through the daemon's approval path.
 *
 * A WebSocket client is the one thing the SDK does not carry: the `ws` package (an optional peer
 * dependency; the `nexo` package installs it) is loaded only when a test daemon is started.
 */
import { Caller, Dispatcher, JsonRpcPeer, type WebSocketLike, WebSocketTransport } from "@nexo/wire";
import { appserver } from "@nexo/wire/schemas";

/** What the daemon asked before running a tool; answer `"accept"` or `"decline"`. */
export type ApprovalRequest = appserver.ApprovalRequestParams;
export type ApprovalDecision = appserver.ApprovalRequestResult["decision"];

/** One tool call of a turn, as the model saw it. */
export interface AgentToolCall {
  tool: string;
  arguments: Record<string, unknown>;
  /** The daemon ran it and it succeeded (a microapp's `{error}` and a refused approval are failures). */
  success: boolean;
  /** The text the model read: a microapp's string output as it is, other output as JSON. */
  text: string;
}

/** A finished turn. */
export interface AgentTurn {
  threadId: string;
  status: "completed" | "failed" | "cancelled";
  /** The agent's messages, in order. */
  messages: string[];
  toolCalls: AgentToolCall[];
  /** Why a failed or cancelled turn ended. */
  error?: string;
}

type WebSocketClass = new (url: string) => WebSocketLike;

async function loadWebSocket(): Promise<WebSocketClass> {
  try {
    const module = (await import("ws")) as { default: WebSocketClass };
    return module.default;
  } catch (error) {
    throw new Error(
      `the microapp test daemon needs the ws package to reach the daemon's AppServer: npm i -D ws (${(error as Error).message})`,
    );
  }
}

/** Turns wait this long by default: a loaded CI machine, a microapp restarting. */
export const DEFAULT_TURN_TIMEOUT_MS = 60_000;

export class AgentClient {
  private readonly calls: Caller<typeof appserver.appServerMethods>;
  private readonly finished = new Map<string, (turn: AgentTurn) => void>();

  private constructor(
    private readonly peer: JsonRpcPeer,
    private readonly workspace: string,
    approve: (request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>,
  ) {
    this.calls = new Caller(peer, { requests: appserver.appServerMethods });
    const serverRequests = new Dispatcher(peer, { requests: appserver.appServerServerRequests });
    serverRequests.handle("item/approval/request", async (params) => ({ decision: await approve(params) }));
    const notifications = new Dispatcher(peer, { notifications: appserver.appServerNotifications });
    notifications.on("turn/completed", ({ turn }) => this.settle(turn, "completed"));
    notifications.on("turn/failed", ({ turn, error }) => this.settle(turn, "failed", error));
    notifications.on("turn/cancelled", ({ turn, reason }) => this.settle(turn, "cancelled", reason));
  }

  /** Connects (`url` carries the token) and runs the AppServer handshake. */
  static async connect(
    url: string,
    options: {
      workspace: string;
      approve: (request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>;
    },
  ): Promise<AgentClient> {
    const WebSocket = await loadWebSocket();
    const peer = new JsonRpcPeer({
      name: "microapp-test-agent",
      transport: new WebSocketTransport(new WebSocket(url)),
      requestTimeoutMs: DEFAULT_TURN_TIMEOUT_MS,
    });
    const client = new AgentClient(peer, options.workspace, options.approve);
    await client.calls.request("initialize", {
      clientInfo: { name: "nexo-microapp-test", version: "1" },
      capabilities: { approvalSupport: true, streamingSupport: false },
    });
    await peer.notify("initialized", {});
    return client;
  }

  /** Sends `text` to the agent in a new thread and resolves with the finished turn. */
  async ask(text: string, timeoutMs = DEFAULT_TURN_TIMEOUT_MS): Promise<AgentTurn> {
    const { thread } = await this.calls.request("thread/start", {
      identity: { channelName: "microapp-test", userId: "tester", workspacePath: this.workspace },
    });
    const done = new Promise<AgentTurn>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.finished.delete(thread.id);
        reject(
          new Error(`the agent did not finish its turn within ${timeoutMs} ms: ${JSON.stringify(text)}`),
        );
      }, timeoutMs);
      this.finished.set(thread.id, (turn) => {
        clearTimeout(timer);
        resolve(turn);
      });
    });
    // Waited for before turn/start is sent: its end can never be missed.
    await this.calls.request("turn/start", { threadId: thread.id, input: [{ type: "text", text }] });
    return done;
  }

  close(): void {
    this.peer.close("test over");
  }

  private settle(turn: appserver.Turn, status: AgentTurn["status"], error?: string): void {
    const waiter = this.finished.get(turn.threadId);
    if (waiter === undefined) return; // a turn whose wait timed out
    this.finished.delete(turn.threadId);
    waiter(readTurn(turn, status, error));
  }
}

/** The agent's messages and each tool call with the result the model read, paired by callId. */
function readTurn(turn: appserver.Turn, status: AgentTurn["status"], error?: string): AgentTurn {
  const messages: string[] = [];
  const calls = new Map<string, AgentToolCall>();
  for (const item of turn.items ?? []) {
    if (item.type === "agentMessage") messages.push(item.payload.text);
    else if (item.type === "toolCall") {
      calls.set(item.payload.callId, {
        tool: item.payload.toolName,
        arguments: item.payload.arguments ?? {},
        success: false,
        text: "",
      });
    } else if (item.type === "toolResult") {
      const call = calls.get(item.payload.callId);
      if (call !== undefined) {
        call.success = item.payload.success;
        call.text = item.payload.result;
      }
    }
  }
  const result: AgentTurn = { threadId: turn.threadId, status, messages, toolCalls: [...calls.values()] };
  const why = error ?? turn.error;
  if (why !== undefined) result.error = why;
  return result;
}
