import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { z } from "zod";
import {
  AppServerErrorCode,
  AppServerErrorResponseSchema,
  type AppServerMethodName,
  type AppServerNotificationName,
  type AppServerServerRequestName,
  appServerClientNotifications,
  appServerMethods,
  appServerNotifications,
  appServerServerRequests,
  InputPartSchema,
  ItemEnvelopeSchema,
  ItemSchema,
  ThreadSchema,
} from "../src/schemas/appserver/index.js";
import {
  JsonRpcErrorResponseSchema,
  JsonRpcNotificationSchema,
  JsonRpcRequestSchema,
  JsonRpcSuccessSchema,
} from "../src/schemas/jsonrpc.js";

function parseOk<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) assert.fail(`expected to parse ${JSON.stringify(value)}:\n${result.error.message}`);
  return result.data;
}

function rejectedPaths(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  assert.equal(result.success, false, `expected ${JSON.stringify(value)} to be rejected`);
  return result.error!.issues.map((issue) => issue.path.join("."));
}

function isMethod(name: string): name is AppServerMethodName {
  return Object.hasOwn(appServerMethods, name);
}
function isServerRequest(name: string): name is AppServerServerRequestName {
  return Object.hasOwn(appServerServerRequests, name);
}
function isNotification(name: string): name is AppServerNotificationName {
  return Object.hasOwn(appServerNotifications, name);
}

// --- fixtures built from the notes' shapes --------------------------------------------------------

const T0 = "2026-03-16T10:00:00.0000000+00:00";
const T1 = "2026-03-16T10:00:05.1234567+00:00";
const threadId = "thread_20260316_x7k2m4";
const identity = {
  channelName: "desktop",
  userId: "local-user",
  channelContext: "workspace:/Users/me/project",
  workspacePath: "/Users/me/project",
};
const textPart = { type: "text", text: "Run the tests and fix any failures." };
const queuedInput = {
  id: "queued_1742119200_ab12",
  threadId,
  nativeInputParts: [textPart],
  materializedInputParts: [textPart],
  displayText: "Run the tests and fix any failures.",
  sender: { senderId: "u1", senderName: "Ann", senderRole: "admin", groupId: "g1" },
  status: "queued",
  createdAt: T0,
  readyAfterTurnId: "turn_001",
};
const base = (id: string, type: string) => ({
  id,
  turnId: "turn_001",
  type,
  status: "completed",
  createdAt: T0,
});

/** One item of every type, with every field the notes list. */
const items = {
  userMessage: {
    ...base("item_001", "userMessage"),
    payloadKind: "userMessage",
    payload: {
      text: "Run the tests",
      nativeInputParts: [
        textPart,
        { type: "commandRef", name: "review", argsText: "src/a.ts", rawText: "/review src/a.ts" },
        { type: "skillRef", name: "tdd" },
        { type: "fileRef", path: "src/a.ts", displayPath: "a.ts" },
        { type: "image", url: "https://x.test/a.png" },
        { type: "localImage", path: "/tmp/a.png", mimeType: "image/png", fileName: "a.png" },
      ],
      materializedInputParts: [textPart],
      deliveryMode: "normal",
      senderId: "u1",
      senderName: "Ann",
      senderRole: "admin",
      channelName: "desktop",
      channelContext: "workspace:/Users/me/project",
      groupId: "g1",
      images: [{ path: "/tmp/a.png", mimeType: "image/png", fileName: "a.png" }],
      triggerKind: "cron",
      triggerLabel: "nightly",
      triggerRefId: "job_1",
    },
  },
  agentMessage: { ...base("item_002", "agentMessage"), completedAt: T1, payload: { text: "Done." } },
  reasoningContent: { ...base("item_003", "reasoningContent"), payload: { text: "Thinking..." } },
  toolCall: {
    ...base("item_004", "toolCall"),
    payload: { toolName: "Exec", arguments: { command: "dotnet test" }, callId: "call_1" },
  },
  toolResult: {
    ...base("item_005", "toolResult"),
    payload: { callId: "call_1", result: "Passed!", success: true },
  },
  commandExecution: {
    ...base("item_006", "commandExecution"),
    payload: {
      command: "dotnet test",
      workingDirectory: "/Users/me/project",
      source: "host",
      status: "completed",
      aggregatedOutput: "Passed!",
      sessionId: "term_1",
      outputPath: "/tmp/out.log",
      originalOutputChars: 7,
      truncated: false,
      backgroundReason: "long-running",
      exitCode: 0,
      durationMs: 1234,
      callId: "call_1",
    },
  },
  fileChange: {
    ...base("item_011", "fileChange"),
    payload: {
      callId: "call_4",
      changes: [
        { path: "src/a.ts", kind: "update", diff: "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-a\n+b\n" },
      ],
      status: "completed",
    },
  },
  toolExecution: {
    ...base("item_007", "toolExecution"),
    payload: {
      callId: "call_1",
      toolName: "Exec",
      status: "completed",
      success: true,
      durationMs: 1234,
      resultPreview: "Passed!",
    },
  },
  pluginFunctionCall: {
    ...base("item_008", "pluginFunctionCall"),
    payload: {
      pluginId: "browser",
      namespace: "web",
      functionName: "open",
      callId: "call_2",
      arguments: { url: "https://x.test" },
      contentItems: [{ type: "text", text: "opened" }],
      structuredResult: { tabId: 3 },
      success: true,
    },
  },
  dynamicToolCall: {
    ...base("item_009", "dynamicToolCall"),
    payload: {
      namespace: "ide",
      toolName: "openFile",
      callId: "call_3",
      arguments: { path: "a.ts" },
      contentItems: [],
      structuredResult: null,
      success: false,
      errorCode: "not_found",
      errorMessage: "no such file",
    },
  },
  approvalRequest: {
    ...base("item_010", "approvalRequest"),
    payload: {
      approvalType: "shell",
      operation: "dotnet test",
      target: "/Users/me/project",
      requestId: "approval_001",
      scopeKey: "shell:*",
      reason: "Agent wants to execute a shell command.",
    },
  },
  approvalResponse: {
    ...base("item_011", "approvalResponse"),
    payload: { requestId: "approval_001", approved: true, decision: "acceptForSession" },
  },
  error: {
    ...base("item_012", "error"),
    payload: { message: "Approval timed out", code: "approval_timeout", fatal: false },
  },
  systemNotice: {
    ...base("item_013", "systemNotice"),
    payload: {
      kind: "compacted",
      trigger: "auto",
      mode: "partial",
      tokensBefore: 150000,
      tokensAfter: 40000,
      percentLeftAfter: 0.8,
      clearedToolResults: 12,
    },
  },
};

const contextUsage = {
  tokens: 40000,
  contextWindow: 200000,
  autoCompactThreshold: 160000,
  warningThreshold: 150000,
  errorThreshold: 190000,
  percentLeft: 0.8,
};
const runtime = { running: false, waitingOnApproval: false, waitingOnPlanConfirmation: false };
const turn = {
  id: "turn_001",
  threadId,
  status: "completed",
  startedAt: T0,
  completedAt: T1,
  tokenUsage: { inputTokens: 1500, outputTokens: 320, totalTokens: 1820 },
  originChannel: "desktop",
  initiator: { channelName: "desktop", userId: "u1", userName: "Ann", userRole: "admin", groupId: "g1" },
  items: Object.values(items),
};
const fullThread = {
  id: threadId,
  workspacePath: "/Users/me/project",
  userId: "local-user",
  originChannel: "desktop",
  channelContext: "workspace:/Users/me/project",
  displayName: "Fix tests",
  status: "active",
  source: {
    kind: "subagent",
    subAgent: {
      parentThreadId: "thread_20260316_parent",
      parentTurnId: "turn_002",
      spawnCallId: "call_9",
      rootThreadId: "thread_20260316_parent",
      depth: 1,
      agentNickname: "scout",
      agentRole: "explorer",
      profileName: "default",
      runtimeType: "native",
      supportsSendInput: true,
      supportsResume: true,
      supportsClose: true,
    },
  },
  createdAt: T0,
  lastActiveAt: T1,
  historyMode: "server",
  configuration: {
    mcpServers: [{ name: "fs", transport: "stdio", command: "npx" }],
    mode: "plan",
    extensions: ["acp"],
    customTools: [],
    model: "claude-sonnet-4",
    workspaceOverride: "/Users/me/other",
    toolProfile: "safe",
    useToolProfileOnly: false,
    agentInstructions: "Be brief.",
    approvalPolicy: "interrupt",
    automationTaskDirectory: ".craft/tasks",
    requireApprovalOutsideWorkspace: true,
    toolAllowList: ["Read"],
    toolDenyList: ["Exec"],
    promptProfile: "terse",
  },
  metadata: { color: "blue" },
  runtime,
  queuedInputs: [queuedInput],
  turns: [turn],
  contextUsage,
};
const summary = {
  id: threadId,
  userId: "local-user",
  workspacePath: "/Users/me/project",
  originChannel: "desktop",
  channelContext: "workspace:/Users/me/project",
  displayName: "Fix tests",
  source: { kind: "user" },
  status: "archived",
  createdAt: T0,
  lastActiveAt: T1,
  turnCount: 3,
  runtime,
  metadata: {},
};

/** Params and result of every client→server method (the Record type makes a missing one a compile error). */
const methodExamples: Record<AppServerMethodName, { params: unknown; result: unknown }> = {
  initialize: {
    params: {
      clientInfo: { name: "tui", version: "1.0.0" },
      capabilities: {
        approvalSupport: false,
        streamingSupport: false,
        backgroundTerminals: true,
        optOutNotificationMethods: ["item/usage/delta", "subagent/progress"],
        acpExtensions: {
          fsReadTextFile: true,
          fsWriteTextFile: false,
          terminalCreate: true,
          extensions: ["x"],
        },
        nodeRepl: { backend: "desktop-node" },
        browserUse: { backend: "desktop-iab", protocolVersion: 2, supportsCancel: true },
        channelAdapter: {
          channelName: "telegram",
          deliveryCapabilities: {
            structuredDelivery: true,
            media: {
              image: {
                maxBytes: 10_000_000,
                allowedMimeTypes: ["image/png"],
                supportsHostPath: true,
                supportsUrl: true,
                supportsBase64: false,
                supportsCaption: true,
              },
            },
          },
          channelTools: [
            {
              name: "sendSticker",
              description: "Send a sticker",
              inputSchema: { type: "object" },
              outputSchema: { type: "object" },
              display: { icon: "sticker", title: "Sticker", subtitle: "Telegram" },
              requiresChatContext: true,
              approval: { kind: "remoteResource", targetArgument: "chatId", operation: "send" },
              deferLoading: false,
            },
          ],
        },
      },
    },
    result: {
      serverInfo: { name: "nexo", version: "0.1.0", protocolVersion: "1" },
      capabilities: { threadManagement: true, modeSwitch: true, extensions: { welcomeSuggestions: true } },
      dashboardUrl: "http://127.0.0.1:8080/dashboard",
    },
  },
  "thread/start": {
    params: {
      identity,
      config: { mode: "agent", approvalPolicy: "autoApprove" },
      dynamicTools: [
        {
          namespace: "ide",
          name: "openFile",
          description: "Open a file in the editor",
          inputSchema: { type: "object", properties: { path: { type: "string" } } },
          deferLoading: true,
          approval: { kind: "file", targetArgument: "path", operationArgument: "mode" },
        },
      ],
      historyMode: "client",
      displayName: "Fix tests",
    },
    result: { thread: fullThread },
  },
  "thread/resume": { params: { threadId }, result: { thread: fullThread } },
  "thread/list": {
    params: {
      identity,
      includeArchived: true,
      includeSubAgents: false,
      crossChannelOrigins: null,
      channelName: "tg",
    },
    result: { data: [summary] },
  },
  "thread/read": { params: { threadId, includeTurns: true }, result: { thread: fullThread } },
  "thread/rollback": { params: { threadId, numTurns: 2 }, result: { thread: fullThread } },
  "thread/subscribe": { params: { threadId, replayRecent: true }, result: {} },
  "thread/unsubscribe": { params: { threadId }, result: {} },
  "thread/pause": { params: { threadId }, result: {} },
  "thread/archive": { params: { threadId }, result: {} },
  "thread/unarchive": { params: { threadId }, result: {} },
  "thread/delete": { params: { threadId }, result: {} },
  "thread/rename": { params: { threadId, displayName: "Green tests" }, result: {} },
  "thread/mode/set": { params: { threadId, mode: "plan" }, result: {} },
  "thread/config/update": { params: { threadId, config: { model: "gpt-5" } }, result: {} },
  "command/list": {
    params: { language: "en", includeBuiltins: true },
    result: {
      commands: [
        {
          name: "/new",
          aliases: [],
          description: "Start a new thread",
          category: "builtin",
          requiresAdmin: false,
        },
      ],
    },
  },
  "command/execute": {
    params: { threadId, command: "/new", arguments: [], sender: { senderId: "u1" } },
    result: {
      handled: true,
      message: "Started a new thread.",
      isMarkdown: false,
      sessionReset: true,
      thread: fullThread,
    },
  },
  "turn/start": {
    params: {
      threadId,
      input: [textPart],
      sender: { senderId: "u1" },
      messages: [{ role: "user", contents: [{ $type: "text", text: "earlier" }] }],
    },
    result: { turn: { id: "turn_002", threadId, status: "running", startedAt: T0, items: [] } },
  },
  "turn/interrupt": { params: { threadId, turnId: "turn_002" }, result: {} },
  "turn/enqueue": {
    params: { threadId, input: [textPart], sender: { senderId: "u1" } },
    result: { queuedInput, queuedInputs: [queuedInput] },
  },
  "turn/queue/remove": { params: { threadId, queuedInputId: queuedInput.id }, result: { queuedInputs: [] } },
  "turn/steer": {
    params: { threadId, expectedTurnId: "turn_002", queuedInputId: queuedInput.id },
    result: { turnId: "turn_002", queuedInputs: [{ ...queuedInput, status: "guidancePending" }] },
  },
  "channel/list": { params: {}, result: { channels: [{ name: "desktop", category: "builtin" }] } },
  "channel/status": {
    params: {},
    result: { channels: [{ name: "telegram", category: "external", enabled: true, running: false }] },
  },
  "workspace/commitMessage/suggest": {
    params: { threadId, paths: ["src/a.ts"], maxDiffChars: 20000 },
    result: { message: "Fix flaky test" },
  },
  "welcome/suggestions": {
    params: { identity, maxItems: 4 },
    result: {
      items: [{ title: "Run tests", prompt: "Run the tests", reason: "CI failed" }],
      source: "dynamic",
      generatedAt: T0,
      fingerprint: "abc123",
    },
  },
};

const serverRequestExamples: Record<AppServerServerRequestName, { params: unknown; result: unknown }> = {
  "item/approval/request": {
    params: {
      threadId,
      turnId: "turn_001",
      itemId: "item_010",
      requestId: "approval_002",
      approvalType: "file",
      operation: "write",
      target: "/Users/me/project/a.ts",
      scopeKey: "file:write",
      reason: "Agent wants to write a file.",
    },
    result: { decision: "acceptAlways" },
  },
  "item/tool/call": {
    params: {
      threadId,
      turnId: "turn_001",
      callId: "call_3",
      namespace: "ide",
      tool: "openFile",
      arguments: { path: "a.ts" },
    },
    result: {
      success: true,
      contentItems: [{ type: "text", text: "opened" }],
      structuredResult: { line: 1 },
    },
  },
  "ext/channel/heartbeat": { params: {}, result: {} },
  "ext/channel/send": {
    params: { target: "group:1", message: { kind: "text", text: "hello" }, metadata: { origin: "cron" } },
    result: { delivered: true, remoteMessageId: "msg_1", errorCode: null, errorMessage: null },
  },
  "ext/channel/toolCall": {
    params: {
      threadId,
      turnId: "turn_001",
      callId: "exttool_1",
      tool: "SendDocument",
      arguments: { fileName: "a.pdf" },
      context: { channelName: "telegram", channelContext: "-100", senderId: "u1", groupId: "-100" },
    },
    result: { success: true, contentItems: [{ type: "text", text: "sent" }] },
  },
};

const notificationExamples: Record<AppServerNotificationName, unknown> = {
  "turn/started": {
    turn: { id: "turn_001", threadId, status: "running", startedAt: T0, items: [items.userMessage] },
  },
  "turn/completed": { turn },
  "turn/failed": {
    turn: { ...turn, status: "failed", error: "provider unavailable" },
    error: "provider unavailable",
  },
  "turn/cancelled": { turn: { ...turn, status: "cancelled" }, reason: "Interrupted by user" },
  "item/started": { threadId, turnId: "turn_001", item: { ...items.agentMessage, status: "started" } },
  "item/completed": { threadId, turnId: "turn_001", item: items.toolResult },
  "item/agentMessage/delta": {
    threadId,
    turnId: "turn_001",
    itemId: "item_002",
    deltaKind: "agentMessage",
    delta: "Do",
  },
  "item/reasoning/delta": {
    threadId,
    turnId: "turn_001",
    itemId: "item_003",
    deltaKind: "reasoningContent",
    delta: "Hmm",
  },
  "item/toolCall/argumentsDelta": {
    threadId,
    turnId: "turn_001",
    itemId: "item_004",
    deltaKind: "toolCallArguments",
    toolName: "Exec",
    callId: "call_1",
    delta: '{"comm',
  },
  "item/commandExecution/outputDelta": {
    threadId,
    turnId: "turn_001",
    itemId: "item_006",
    delta: "Passed!\n",
  },
  "item/approval/resolved": { threadId, turnId: "turn_001", item: items.approvalResponse },
  "item/usage/delta": {
    threadId,
    turnId: "turn_001",
    inputTokens: 1200,
    outputTokens: 80,
    totalInputTokens: 2400,
    totalOutputTokens: 160,
    contextUsage,
  },
  "subagent/progress": {
    threadId,
    turnId: "turn_001",
    entries: [{ label: "scout", currentTool: "Read", inputTokens: 10, outputTokens: 2, isCompleted: false }],
  },
  "subagent/graphChanged": { parentThreadId: threadId, childThreadId: "thread_20260316_child1" },
  "system/event": {
    threadId,
    turnId: "turn_001",
    kind: "compactWarning",
    message: "Context 85% full",
    percentLeft: 0.15,
    tokenCount: 170000,
  },
  "system/jobResult": {
    source: "cron",
    jobId: "job_1",
    jobName: "nightly",
    threadId,
    result: "ok",
    tokenUsage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
  },
  "plan/updated": {
    title: "Fix tests",
    overview: "Two steps",
    content: "# Plan",
    todos: [
      { id: "t1", content: "Reproduce", priority: "high", status: "in_progress" },
      { id: "t2", content: "Fix", priority: "medium", status: "pending" },
    ],
  },
  "thread/started": { thread: fullThread },
  "thread/resumed": { thread: fullThread, resumedBy: "tui" },
  "thread/renamed": { threadId, displayName: "Green tests" },
  "thread/deleted": { threadId },
  "thread/statusChanged": { threadId, previousStatus: "active", newStatus: "paused" },
  "thread/runtimeChanged": { threadId, runtime: { ...runtime, running: true, waitingOnApproval: true } },
  "thread/queue/updated": { threadId, queuedInputs: [queuedInput] },
  "workspace/configChanged": { source: "plugin/install", regions: ["plugins", "skills"], changedAt: T1 },
  "mcp/status/updated": {
    server: { name: "sqlite", enabled: true, startupState: "ready", toolCount: 3, transport: "stdio" },
  },
};

// Every complete JSON example of specs/appserver-protocol.txt, verbatim.
const specMessages = {
  protocolRequest: `{"jsonrpc":"2.0","id":1,"method":"thread/list","params":{}}`,
  protocolResponse: `{"jsonrpc":"2.0","id":1,"result":{"data":[]}}`,
  protocolNotification: `{"jsonrpc":"2.0","method":"turn/started","params":{"turn":{"id":"turn_001"}}}`,
  initializeRequest: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"my-client","title":"My Client","version":"0.1.0"},"capabilities":{"approvalSupport":true,"streamingSupport":true,"commandExecutionStreaming":true,"toolExecutionLifecycle":true,"configChange":true}}}`,
  initializeResponse: `{"jsonrpc":"2.0","id":0,"result":{"serverInfo":{"name":"dotcraft","version":"0.2.0","protocolVersion":"1","extensions":["acp"]},"capabilities":{"threadManagement":true,"threadSubscriptions":true,"approvalFlow":true,"skillsManagement":true,"pluginManagement":true,"skillVariants":true,"modelCatalogManagement":true,"mcpManagement":true}}}`,
  initialized: `{"jsonrpc":"2.0","method":"initialized","params":{}}`,
  threadStartRequest: `{"jsonrpc":"2.0","id":1,"method":"thread/start","params":{"identity":{"channelName":"desktop","userId":"local-user","channelContext":"workspace:/Users/me/project","workspacePath":"/Users/me/project"},"historyMode":"server","displayName":"Fix tests"}}`,
  threadStartResponse: `{"jsonrpc":"2.0","id":1,"result":{"thread":{"id":"thread_20260316_x7k2m4","workspacePath":"/Users/me/project","userId":"local-user","originChannel":"desktop","status":"active","turns":[]}}}`,
  turnStartRequest: `{"jsonrpc":"2.0","id":2,"method":"turn/start","params":{"threadId":"thread_20260316_x7k2m4","input":[{"type":"text","text":"Run the tests and fix any failures."}]}}`,
  turnStartResponse: `{"jsonrpc":"2.0","id":2,"result":{"turn":{"id":"turn_001","threadId":"thread_20260316_x7k2m4","status":"running","items":[]}}}`,
  approvalRequest: `{"jsonrpc":"2.0","id":50,"method":"item/approval/request","params":{"threadId":"thread_20260316_x7k2m4","turnId":"turn_001","itemId":"item_005","requestId":"approval_001","approvalType":"shell","operation":"dotnet test","target":"/Users/me/project","scopeKey":"shell:*","reason":"Agent wants to execute a shell command."}}`,
  approvalResponse: `{"jsonrpc":"2.0","id":50,"result":{"decision":"accept"}}`,
  errorResponse: `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params"}}`,
};

// The spec's minimal Node client builds these params (with a placeholder workspace path).
const nodeClientMessages = [
  {
    method: "initialize",
    params: {
      clientInfo: { name: "custom-client", title: "Custom Client", version: "0.1.0" },
      capabilities: {
        approvalSupport: true,
        streamingSupport: true,
        commandExecutionStreaming: true,
        toolExecutionLifecycle: true,
        configChange: true,
      },
    },
  },
  {
    method: "thread/start",
    params: {
      identity: {
        channelName: "custom",
        userId: "local-user",
        channelContext: "workspace:/work/repo",
        workspacePath: "/work/repo",
      },
      historyMode: "server",
    },
  },
  {
    method: "turn/start",
    params: { threadId, input: [{ type: "text", text: "Summarize this repository." }] },
  },
];

const spec = (key: keyof typeof specMessages): Record<string, unknown> => JSON.parse(specMessages[key]);

describe("AppServer spec examples", () => {
  it("parses every request example with the table of its direction", () => {
    for (const key of [
      "initializeRequest",
      "threadStartRequest",
      "turnStartRequest",
      "approvalRequest",
    ] as const) {
      const message = parseOk(JsonRpcRequestSchema, spec(key));
      if (isMethod(message.method)) {
        assert.deepEqual(parseOk(appServerMethods[message.method].params, message.params), message.params);
      } else if (isServerRequest(message.method)) {
        assert.deepEqual(
          parseOk(appServerServerRequests[message.method].params, message.params),
          message.params,
        );
      } else {
        assert.fail(`no schema for ${message.method}`);
      }
    }
    for (const { method, params } of nodeClientMessages) {
      assert.ok(isMethod(method));
      assert.deepEqual(parseOk(appServerMethods[method].params, params), params);
    }
  });

  it("parses every response example with its method's result schema", () => {
    const pairs = [
      ["initializeResponse", appServerMethods.initialize.result],
      ["threadStartResponse", appServerMethods["thread/start"].result],
      ["turnStartResponse", appServerMethods["turn/start"].result],
      ["approvalResponse", appServerServerRequests["item/approval/request"].result],
      ["protocolResponse", appServerMethods["thread/list"].result],
    ] as const;
    for (const [key, schema] of pairs) {
      const response = parseOk(JsonRpcSuccessSchema, spec(key));
      assert.deepEqual(parseOk(schema, response.result), response.result);
    }
  });

  it("parses the initialized notification with the client-notification table", () => {
    const message = parseOk(JsonRpcNotificationSchema, spec("initialized"));
    assert.equal(message.method, "initialized");
    parseOk(appServerClientNotifications.initialized.params, message.params);
  });

  it("parses the error example, with a code from the AppServer table", () => {
    const response = parseOk(AppServerErrorResponseSchema, spec("errorResponse"));
    parseOk(JsonRpcErrorResponseSchema, spec("errorResponse"));
    assert.equal(response.error.code, AppServerErrorCode.invalidParams);
    const detailed = parseOk(AppServerErrorResponseSchema, {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: AppServerErrorCode.parseError,
        message: "Parse error",
        data: { detail: "line 1", at: 3 },
      },
    });
    assert.equal(detailed.error.data?.detail, "line 1");
    assert.equal(detailed.error.data?.at, 3);
  });

  it("reads the Protocol section's abridged envelopes as envelopes only", () => {
    // That section illustrates message kinds with truncated params: thread/list without the
    // identity it requires and a turn/started whose turn carries only an id. The envelopes parse;
    // the params schemas name what is missing.
    const request = parseOk(JsonRpcRequestSchema, spec("protocolRequest"));
    assert.deepEqual(rejectedPaths(appServerMethods["thread/list"].params, request.params), ["identity"]);
    const note = parseOk(JsonRpcNotificationSchema, spec("protocolNotification"));
    assert.deepEqual(rejectedPaths(appServerNotifications["turn/started"].params, note.params), [
      "turn.threadId",
      "turn.status",
    ]);
  });
});

describe("AppServer tables", () => {
  it("parses a complete example of every client→server method", () => {
    for (const [name, example] of Object.entries(methodExamples)) {
      assert.ok(isMethod(name));
      const schema = appServerMethods[name];
      assert.deepEqual(parseOk(schema.params, example.params), example.params, `${name} params`);
      assert.deepEqual(parseOk(schema.result, example.result), example.result, `${name} result`);
    }
  });

  it("parses a complete example of every server→client request", () => {
    for (const [name, example] of Object.entries(serverRequestExamples)) {
      assert.ok(isServerRequest(name));
      const schema = appServerServerRequests[name];
      assert.deepEqual(parseOk(schema.params, example.params), example.params, `${name} params`);
      assert.deepEqual(parseOk(schema.result, example.result), example.result, `${name} result`);
    }
  });

  it("parses a complete example of every notification", () => {
    for (const [name, params] of Object.entries(notificationExamples)) {
      assert.ok(isNotification(name));
      assert.deepEqual(parseOk(appServerNotifications[name].params, params), params, name);
    }
  });

  it("keeps method families apart: no name in two tables", () => {
    const names = [
      ...Object.keys(appServerMethods),
      ...Object.keys(appServerServerRequests),
      ...Object.keys(appServerNotifications),
      ...Object.keys(appServerClientNotifications),
    ];
    assert.equal(new Set(names).size, names.length);
    // The docs page's turn/diff/updated and turn/plan/updated do not exist in the reference.
    assert.equal(isNotification("turn/diff/updated"), false);
    assert.equal(isNotification("turn/plan/updated"), false);
  });
});

describe("AppServer items", () => {
  it("parses one item of every type and names every type once", () => {
    for (const item of Object.values(items)) assert.deepEqual(parseOk(ItemSchema, item), item);
    const declared = ItemSchema.options.map((option) => option.shape.type.value).sort();
    assert.deepEqual(declared, Object.keys(items).sort());
  });

  it("rejects an unknown item type, which the envelope still accepts", () => {
    const future = { ...base("item_099", "mcpToolCall"), payload: { server: "fs" } };
    assert.deepEqual(rejectedPaths(ItemSchema, future), ["type"]);
    assert.deepEqual(parseOk(ItemEnvelopeSchema, future), future);
  });

  it("checks the payload against the item's own type", () => {
    // A toolResult payload under a toolCall type misses toolName.
    assert.deepEqual(rejectedPaths(ItemSchema, { ...items.toolCall, payload: items.toolResult.payload }), [
      "payload.toolName",
    ]);
    assert.deepEqual(
      rejectedPaths(ItemSchema, {
        ...items.approvalResponse,
        payload: { requestId: "a", approved: true, decision: "yes" },
      }),
      ["payload.decision"],
    );
    assert.deepEqual(
      rejectedPaths(ItemSchema, { ...items.agentMessage, status: "done", createdAt: "yesterday" }),
      ["status", "createdAt"],
    );
  });
});

describe("AppServer unknown fields", () => {
  it("keeps unknown fields at every level of a thread", () => {
    const thread = {
      ...fullThread,
      effectiveWorkspacePath: "/Users/me/project",
      goal: { objective: "green" },
      runtime: { ...runtime, compacting: true },
      turns: [
        {
          ...turn,
          traceId: "tr_1",
          items: [
            {
              ...items.toolCall,
              mcpApp: { available: true },
              payload: { ...items.toolCall.payload, providerCallName: "exec" },
            },
          ],
        },
      ],
    };
    assert.deepEqual(parseOk(ThreadSchema, thread), thread);
  });

  it("keeps unknown capabilities and params members", () => {
    const params = {
      clientInfo: { name: "c", version: "1", vendor: "acme" },
      capabilities: { approvalSupport: true, requestUserInputSupport: true },
      locale: "en",
    };
    assert.deepEqual(parseOk(appServerMethods.initialize.params, params), params);
  });
});

describe("AppServer invalid messages", () => {
  it("rejects bad params with the offending path", () => {
    const turnStart = appServerMethods["turn/start"].params;
    assert.deepEqual(rejectedPaths(turnStart, { threadId, input: [] }), ["input"]);
    assert.deepEqual(rejectedPaths(turnStart, { threadId, input: [{ type: "video", url: "x" }] }), [
      "input.0.type",
    ]);
    assert.deepEqual(rejectedPaths(turnStart, { input: [textPart] }), ["threadId"]);
    assert.deepEqual(rejectedPaths(appServerMethods["thread/rollback"].params, { threadId, numTurns: 0 }), [
      "numTurns",
    ]);
    assert.deepEqual(rejectedPaths(appServerMethods["thread/rename"].params, { threadId, displayName: "" }), [
      "displayName",
    ]);
    assert.deepEqual(rejectedPaths(appServerMethods["thread/mode/set"].params, { threadId, mode: "yolo" }), [
      "mode",
    ]);
    assert.deepEqual(
      rejectedPaths(appServerMethods["thread/start"].params, {
        identity: { ...identity, channelName: undefined },
      }),
      ["identity.channelName"],
    );
    assert.deepEqual(rejectedPaths(appServerMethods.initialize.params, { clientInfo: { name: "c" } }), [
      "clientInfo.version",
    ]);
  });

  it("rejects bad results and notifications with the offending path", () => {
    assert.deepEqual(
      rejectedPaths(appServerServerRequests["item/approval/request"].result, { decision: "yes" }),
      ["decision"],
    );
    assert.deepEqual(
      rejectedPaths(appServerNotifications["item/agentMessage/delta"].params, {
        threadId,
        turnId: "turn_001",
        itemId: "item_002",
        deltaKind: "reasoningContent",
        delta: "x",
      }),
      ["deltaKind"],
    );
    assert.deepEqual(
      rejectedPaths(appServerNotifications["thread/statusChanged"].params, {
        threadId,
        previousStatus: "active",
        newStatus: "deleted",
      }),
      ["newStatus"],
    );
    assert.deepEqual(
      rejectedPaths(appServerNotifications["item/approval/resolved"].params, {
        threadId,
        turnId: "turn_001",
        item: items.approvalRequest,
      }),
      ["item.type", "item.payload.approved", "item.payload.decision"],
    );
    assert.deepEqual(
      rejectedPaths(appServerNotifications["plan/updated"].params, {
        title: "t",
        overview: "o",
        content: "c",
        todos: [{ id: "1", content: "x", priority: "urgent", status: "inProgress" }],
      }),
      ["todos.0.priority", "todos.0.status"],
    );
  });

  it("rejects an unknown input part type", () => {
    assert.deepEqual(rejectedPaths(InputPartSchema, { type: "audio", path: "a.wav" }), ["type"]);
  });
});

describe("AppServer error codes", () => {
  it("gives every name its own code, in the JSON-RPC error ranges", () => {
    const codes = Object.values(AppServerErrorCode);
    assert.equal(new Set(codes).size, codes.length);
    for (const code of codes)
      assert.ok((code >= -32700 && code <= -32600) || (code >= -32099 && code <= -32000), `${code}`);
  });
});
