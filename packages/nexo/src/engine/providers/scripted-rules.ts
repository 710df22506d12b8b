/**
 * What the scripted demo model answers: a pure function from a request to a reply plan.
 *
 * The rules read the last user message and turn a few plain commands into tool calls, so the
 * whole agent loop (tool call, approval, result, reply) can be shown offline. Tools are only
 * called when the request offers them, and their argument names are read from each tool's
 * schema, so the rules keep working whatever a tool names its parameters. Anything else gets an
 * honest answer: this is a demo model, and here is how to configure a real one.
 */
import type { ChatMessage, ChatRequest, ToolResultBlock, ToolSpec } from "../types.js";

export interface PlannedCall {
  name: string;
  input: Record<string, unknown>;
}

export interface ReplyPlan {
  thinking?: string;
  text: string;
  calls: PlannedCall[];
}

export const SCRIPTED_INTRO = "I'm nexo's built-in demo model (the offline \"scripted\" provider)";
export const CONFIGURE_HINT =
  "To talk to a real model, add a provider to llm.yaml (Anthropic, OpenAI, or a local Ollama) and point the agent at it; see docs/providers.md.";

/** Argument names tried first for each built-in tool, before falling back to the schema's own. */
const ARGUMENT_NAMES = {
  path: ["file_path", "path", "file", "filename"],
  pattern: ["pattern", "glob", "query", "regex"],
  command: ["command", "cmd"],
  content: ["content", "text", "data"],
  memory: ["content", "text", "memory", "fact"],
  query: ["query", "q", "text", "topic"],
} as const;

/** Tools with commands of their own; a sentence merely containing "read" must not call Read. */
const BUILTIN_TOOLS = new Set([
  "Read",
  "Glob",
  "Grep",
  "Bash",
  "Write",
  "Edit",
  "Spawn",
  "memory_store",
  "memory_recall",
]);

/** Name parts too generic to say which tool a sentence is about. */
const GENERIC_NAME_PARTS = new Set([
  "demo",
  "tool",
  "tools",
  "get",
  "set",
  "mcp",
  "plugin",
  "ext",
  "run",
  "the",
]);

function lastMessage(request: ChatRequest): ChatMessage | undefined {
  return request.messages[request.messages.length - 1];
}

function textOf(message: ChatMessage | undefined): string {
  if (!message) return "";
  return message.content
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n")
    .trim();
}

function schemaProperties(tool: ToolSpec): Record<string, Record<string, unknown>> {
  const props = tool.inputSchema.properties;
  return props !== null && typeof props === "object"
    ? (props as Record<string, Record<string, unknown>>)
    : {};
}

function stringProperties(tool: ToolSpec): string[] {
  return Object.entries(schemaProperties(tool))
    .filter(([, schema]) => schema?.type === "string" || schema?.type === undefined)
    .map(([name]) => name);
}

/** The parameter of `tool` that should receive a value, by preferred names, then required strings. */
function argumentName(tool: ToolSpec, preferred: readonly string[]): string | undefined {
  const props = Object.keys(schemaProperties(tool));
  for (const name of preferred) if (props.includes(name)) return name;
  const strings = stringProperties(tool);
  const required = Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as unknown[]) : [];
  return strings.find((name) => required.includes(name)) ?? strings[0];
}

function trimPunctuation(value: string): string {
  return value
    .trim()
    .replace(/^["'`]+|["'`]+$/g, "")
    .replace(/[.,;:!?)]+$/, "")
    .trim();
}

/** "Please read X?" → "read X": the rules then match the command itself. */
function commandText(text: string): string {
  return text
    .trim()
    .replace(/^(?:(?:please|can you|could you|would you|will you|now|ok(?:ay)?|hey|nexo)[,\s]+)+/i, "")
    .replace(/[\s,]*please[.!?]*$/i, "")
    .trim();
}

function offered(request: ChatRequest, name: string): ToolSpec | undefined {
  return request.tools?.find((t) => t.name === name);
}

function notOffered(name: string, what: string): ReplyPlan {
  return {
    text: `I would ${what} with the ${name} tool, but it is not available in this session, so I can't.`,
    calls: [],
  };
}

/** A call to a built-in tool with one or two arguments, or an honest refusal when it is missing. */
function callTool(
  request: ChatRequest,
  toolName: string,
  what: string,
  preface: string,
  args: Array<[preferred: readonly string[], value: string]>,
): ReplyPlan {
  const tool = offered(request, toolName);
  if (!tool) return notOffered(toolName, what);
  const input: Record<string, unknown> = {};
  for (const [preferred, value] of args) {
    const name = argumentName(tool, preferred);
    if (name === undefined) {
      return {
        text: `The ${toolName} tool takes no argument I can fill from your message, so I can't ${what}.`,
        calls: [],
      };
    }
    input[name] = value;
  }
  return { text: preface, calls: [{ name: toolName, input }] };
}

function toolNamesById(messages: readonly ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) for (const b of m.content) if (b.type === "tool_use") names.set(b.id, b.name);
  return names;
}

function preview(content: string): string {
  const cut =
    content.length > 600 ? `${content.slice(0, 600)}\n… (${content.length - 600} more characters)` : content;
  return cut.includes("\n") ? `\n\`\`\`\n${cut}\n\`\`\`` : ` ${cut}`;
}

function summariseResults(request: ChatRequest, results: ToolResultBlock[]): ReplyPlan {
  const names = toolNamesById(request.messages);
  const lines = results.map((r) => {
    const name = names.get(r.toolUseId) ?? "the tool";
    return r.isError ? `- ${name} failed:${preview(r.content)}` : `- ${name} returned:${preview(r.content)}`;
  });
  const heading =
    results.length === 1
      ? "Here is the tool result (as a demo model I relay it rather than interpret it):"
      : `Here are the ${results.length} tool results (as a demo model I relay them rather than interpret them):`;
  return { text: `${heading}\n${lines.join("\n")}`, calls: [] };
}

/** A deterministic digest for compaction requests and "summarize": who asked what, which tools ran. */
function summariseConversation(source: string): ReplyPlan {
  const asks = source
    .split("\n")
    .filter((line) => line.startsWith("user: "))
    .map((line) => line.slice("user: ".length).trim())
    .filter((line) => line !== "");
  const tools = [...source.matchAll(/called (\S+) with/g)].map((m) => m[1]);
  const parts = [
    `Summary (written by the scripted demo model): ${asks.length} user request(s)` +
      (asks.length ? `: ${asks.map((a) => `"${a.slice(0, 80)}"`).join("; ")}.` : "."),
  ];
  if (tools.length) parts.push(`Tools used: ${[...new Set(tools)].join(", ")}.`);
  return { text: parts.join(" "), calls: [] };
}

function conversationTranscript(messages: readonly ChatMessage[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type === "text") lines.push(`${m.role}: ${b.text}`);
      if (b.type === "tool_use") lines.push(`${m.role} called ${b.name} with ${JSON.stringify(b.input)}`);
    }
  }
  return lines.join("\n");
}

/** `mcp__files__read_text` → `read_text`: what a person calls an MCP server's tool. */
function bareName(name: string): string | undefined {
  const match = /^mcp__.+?__(.+)$/.exec(name);
  return match?.[1];
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Where the message names `tool` in full (or by its bare MCP name) as a word: the end of it, or -1. */
function fullNameEnd(tool: ToolSpec, lower: string): number {
  for (const name of [tool.name, bareName(tool.name)]) {
    if (name === undefined) continue;
    const match = new RegExp(`(?:^|[^a-z0-9_])(${escapeRegExp(name.toLowerCase())})(?![a-z0-9_])`).exec(
      lower,
    );
    if (match) return match.index + match[0].length;
  }
  return -1;
}

/** Where the message names a distinctive part of `tool`'s name ("weather" for demo_weather), or -1. */
function partialNameEnd(tool: ToolSpec, lower: string): number {
  for (const part of tool.name.toLowerCase().split(/[_\-.]+/)) {
    if (part.length < 4 || GENERIC_NAME_PARTS.has(part)) continue;
    const match = new RegExp(`\\b${escapeRegExp(part)}\\b`).exec(lower);
    if (match) return match.index + part.length;
  }
  return -1;
}

/**
 * The tool the message names: a full name (or an MCP tool's bare name) anywhere in the sentence wins
 * over a tool only partly named — the longest full name first, so `demo_weather_alerts` is not
 * taken for `demo_weather` — then the first tool a distinctive part of whose name appears.
 */
function namedTool(request: ChatRequest, lower: string): { tool: ToolSpec; end: number } | undefined {
  const candidates = (request.tools ?? []).filter((tool) => !BUILTIN_TOOLS.has(tool.name));
  const full = candidates
    .map((tool) => ({ tool, end: fullNameEnd(tool, lower) }))
    .filter((found) => found.end >= 0)
    .sort((a, b) => b.tool.name.length - a.tool.name.length);
  if (full[0] !== undefined) return full[0];
  for (const tool of candidates) {
    const end = partialNameEnd(tool, lower);
    if (end >= 0) return { tool, end };
  }
  return undefined;
}

/** A plugin or MCP tool the message names, with arguments built from the rest of the sentence. */
function mentionedTool(request: ChatRequest, text: string): ReplyPlan | undefined {
  const lower = text.toLowerCase();
  const named = namedTool(request, lower);
  if (named !== undefined) {
    const { tool, end } = named;
    const props = Object.keys(schemaProperties(tool));
    if (props.length === 0) return { text: `Calling ${tool.name}.`, calls: [{ name: tool.name, input: {} }] };
    const strings = stringProperties(tool);
    const required = Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as unknown[]) : [];
    const target =
      props.length === 1 && strings.length === 1 ? strings[0] : strings.filter((s) => required.includes(s));
    const name = typeof target === "string" ? target : target?.length === 1 ? target[0] : undefined;
    if (name === undefined) {
      return {
        text: `You mentioned the ${tool.name} tool, but its arguments (${props.join(", ")}) are more than I can fill from a sentence. ${CONFIGURE_HINT}`,
        calls: [],
      };
    }
    const rest = trimPunctuation(
      text.slice(end).replace(/^\s*(?:in|for|of|about|on|at|to|with|from|:)\s+/i, ""),
    );
    const value = rest || trimPunctuation(text);
    return {
      text: `Calling ${tool.name} for "${value}".`,
      calls: [{ name: tool.name, input: { [name]: value } }],
    };
  }
  return undefined;
}

/**
 * A sentence that really calls `tool` (the help must offer only what works): its name, then a
 * placeholder for the one string argument mentionedTool can fill, if it takes one.
 */
function exampleCall(tool: ToolSpec): string {
  const name = bareName(tool.name) ?? tool.name;
  const props = Object.keys(schemaProperties(tool));
  if (props.length === 0) return name;
  const strings = stringProperties(tool);
  const required = Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as unknown[]) : [];
  const fillable =
    props.length === 1 && strings.length === 1 ? strings : strings.filter((s) => required.includes(s));
  return fillable.length === 1 ? `${name} for ${fillable[0]!.toUpperCase()}` : name;
}

function help(request: ChatRequest): ReplyPlan {
  const can: string[] = [];
  const has = (name: string) => offered(request, name) !== undefined;
  if (has("Read")) can.push('"read FILE" (Read)');
  if (has("Glob")) can.push('"list files", "glob PATTERN" (Glob)');
  if (has("Grep")) can.push('"search WORD" (Grep)');
  if (has("Bash")) can.push('"run COMMAND" (Bash)');
  if (has("Write")) can.push('"write FILE: TEXT" (Write)');
  if (has("memory_store")) can.push('"remember FACT" (memory_store)');
  if (has("memory_recall")) can.push('"what do you remember about TOPIC" (memory_recall)');
  const others = (request.tools ?? []).filter((t) => !BUILTIN_TOOLS.has(t.name));
  if (others.length)
    can.push(`name a tool and what it is for: ${others.map((tool) => `"${exampleCall(tool)}"`).join(", ")}`);
  can.push('"think about TOPIC" (shows a thinking stream)');
  return {
    text: `${SCRIPTED_INTRO}: I run without a network and only follow a few simple commands, so I can't answer free-form questions. ${CONFIGURE_HINT}\nTry: ${can.join("; ")}.`,
    calls: [],
  };
}

/**
 * `call TOOL {json}`: exactly that call, whatever the tool's schema — how tests and demos make an
 * agent call a tool with given arguments (the SDK's microapp test daemon sends this sentence).
 */
function exactCall(request: ChatRequest, name: string, json: string): ReplyPlan {
  if (!offered(request, name)) return notOffered(name, "make that call");
  let input: unknown;
  try {
    input = JSON.parse(json);
  } catch (error) {
    return { text: `The arguments for ${name} are not valid JSON (${(error as Error).message}).`, calls: [] };
  }
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    return { text: `The arguments for ${name} must be a JSON object.`, calls: [] };
  }
  return { text: `Calling ${name}.`, calls: [{ name, input: input as Record<string, unknown> }] };
}

type Rule = readonly [pattern: RegExp, reply: (match: RegExpExecArray, request: ChatRequest) => ReplyPlan];

/** Tried in order on the last user message, politeness removed; the first match answers. */
const RULES: readonly Rule[] = [
  [
    /^call\s+([A-Za-z0-9_.:-]+)\s+(?:with\s+)?(\{[\s\S]*\})$/,
    (m, request) => exactCall(request, m[1]!, m[2]!),
  ],
  [
    /^(?:think|reason) (?:about|through|over|on)\s+(.+)$/is,
    (m) => {
      const topic = trimPunctuation(m[1]!);
      return {
        thinking: `The user wants me to think about ${topic}. I am a scripted demo model, so there is no real reasoning here: this stream only shows how thinking appears in nexo.`,
        text: `About ${topic}: I'm only nexo's built-in demo model, so I have no real opinion to offer. ${CONFIGURE_HINT}`,
        calls: [],
      };
    },
  ],
  [
    /^(?:what do you (?:remember|know) about|do you remember|recall)\s+(.+)$/is,
    (m, request) => {
      const query = trimPunctuation(m[1]!);
      return callTool(
        request,
        "memory_recall",
        "look that up in memory",
        `Looking up "${query}" in memory.`,
        [[ARGUMENT_NAMES.query, query]],
      );
    },
  ],
  [
    /^remember(?: that)?\s+(.+)$/is,
    (m, request) =>
      callTool(request, "memory_store", "store that in memory", "I'll store that in long-term memory.", [
        [ARGUMENT_NAMES.memory, m[1]!.trim().replace(/[.!]+$/, "")],
      ]),
  ],
  [/^summari[sz]e\b/i, (_m, request) => summariseConversation(conversationTranscript(request.messages))],
  [
    /^write\s+(?:to\s+)?(?:the\s+)?(?:file\s+)?(\S+?):\s*([\s\S]*)$/i,
    (m, request) => {
      const file = trimPunctuation(m[1]!);
      return callTool(request, "Write", "write that file", `Writing ${file}.`, [
        [ARGUMENT_NAMES.path, file],
        [ARGUMENT_NAMES.content, m[2]!],
      ]);
    },
  ],
  [
    /^(?:read|show|open|cat)\s+(?:me\s+)?(?:the\s+)?(?:file\s+)?(\S+)/i,
    (m, request) => {
      const file = trimPunctuation(m[1]!);
      return callTool(request, "Read", "read that file", `Reading ${file}.`, [[ARGUMENT_NAMES.path, file]]);
    },
  ],
  [
    /^(?:list|ls)(?:\s+(?:all\s+)?(?:the\s+)?files)?(?:\s+in\s+(\S+))?$/i,
    (m, request) => {
      const dir = m[1] ? trimPunctuation(m[1]).replace(/\/+$/, "") : "";
      const pattern = dir ? `${dir}/*` : "*";
      return callTool(request, "Glob", "list files", `Listing files matching ${pattern}.`, [
        [ARGUMENT_NAMES.pattern, pattern],
      ]);
    },
  ],
  [
    /^glob\s+(\S+)/i,
    (m, request) => {
      const pattern = trimPunctuation(m[1]!);
      return callTool(request, "Glob", "find those files", `Finding files matching ${pattern}.`, [
        [ARGUMENT_NAMES.pattern, pattern],
      ]);
    },
  ],
  [
    /^(?:search|grep)\s+(?:for\s+)?(.+)$/is,
    (m, request) => {
      const pattern = trimPunctuation(m[1]!);
      return callTool(request, "Grep", "search for that", `Searching for "${pattern}".`, [
        [ARGUMENT_NAMES.pattern, pattern],
      ]);
    },
  ],
  [
    /^run\s+(.+)$/is,
    (m, request) => {
      const command = m[1]!.trim().replace(/^`+|`+$/g, "");
      return callTool(request, "Bash", "run that", `Running \`${command}\`.`, [
        [ARGUMENT_NAMES.command, command],
      ]);
    },
  ],
];

export function planReply(request: ChatRequest): ReplyPlan {
  const last = lastMessage(request);
  const results = last?.role === "user" ? last.content.filter((b) => b.type === "tool_result") : [];
  if (results.length > 0) return summariseResults(request, results);

  const raw = textOf(last);
  // The engine's compaction asks, with no tools, for a summary of a transcript.
  if (!request.tools?.length && /summar/i.test(request.system ?? "")) return summariseConversation(raw);
  const text = commandText(raw);
  for (const [pattern, reply] of RULES) {
    const match = pattern.exec(text);
    if (match) return reply(match, request);
  }
  return mentionedTool(request, text) ?? help(request);
}
