/**
 * Small real implementations of the engine's interfaces for turn-loop tests: a provider that
 * plays a list of responses (each a function of the request, so tests can assert what the model
 * was sent) and a tool host over plain Tool objects.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { TurnEvent } from "../../src/engine/events.js";
import type { ToolHost } from "../../src/engine/session-types.js";
import type { HubEvent } from "../../src/engine/thread-hub.js";
import type {
  ChatRequest,
  LlmProvider,
  ProviderEvent,
  Tool,
  ToolContext,
  ToolOutput,
  ToolSpec,
} from "../../src/engine/types.js";

export type Step = (
  request: ChatRequest,
) => ProviderEvent[] | Error | { events: ProviderEvent[]; delayMs: number };

export class PlaybackProvider implements LlmProvider {
  readonly id = "playback";
  readonly requests: ChatRequest[] = [];
  constructor(
    private readonly steps: Step[],
    private readonly window?: number,
  ) {}

  contextWindow(): number | undefined {
    return this.window;
  }

  async *stream(request: ChatRequest): AsyncIterable<ProviderEvent> {
    // Keep a deep copy: the session mutates its history after the call.
    this.requests.push(JSON.parse(JSON.stringify({ ...request, signal: undefined })) as ChatRequest);
    const step = this.steps.shift();
    if (!step) throw new Error("playback provider: no more steps");
    const out = step(request);
    if (out instanceof Error) throw out;
    const { events, delayMs } = Array.isArray(out) ? { events: out, delayMs: 0 } : out;
    for (const e of events) {
      if (delayMs) await sleep(delayMs, undefined, { signal: request.signal }).catch(() => undefined);
      if (request.signal?.aborted) return;
      yield e;
    }
  }
}

export const text = (t: string): ProviderEvent[] => [
  { type: "text_delta", text: t },
  { type: "usage", usage: { inputTokens: 10, outputTokens: 5 } },
  { type: "stop", reason: "end_turn" },
];

export const toolCalls = (
  ...calls: Array<{ id: string; name: string; input: Record<string, unknown> }>
): ProviderEvent[] => [
  ...calls.map((c) => ({ type: "tool_call" as const, ...c })),
  { type: "usage", usage: { inputTokens: 10, outputTokens: 5 } },
  { type: "stop", reason: "tool_use" },
];

export class SimpleToolHost implements ToolHost {
  private readonly tools = new Map<string, Tool>();
  constructor(tools: Tool[]) {
    for (const t of tools) this.tools.set(t.name, t);
  }
  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }
  specs(filter?: (tool: Tool) => boolean): ToolSpec[] {
    return [...this.tools.values()]
      .filter((t) => !filter || filter(t))
      .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  }
  async invoke(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    const tool = this.tools.get(name);
    if (!tool) return { output: `unknown tool ${name}`, isError: true };
    try {
      return await tool.execute(args, ctx);
    } catch (error) {
      return { output: (error as Error).message, isError: true };
    }
  }
}

export function tool(
  name: string,
  category: Tool["category"],
  execute: (args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolOutput>,
): Tool {
  return {
    name,
    description: `test tool ${name}`,
    inputSchema: { type: "object" },
    category,
    source: "builtin",
    describe: (args) => `${name} ${JSON.stringify(args)}`,
    execute,
  };
}

/** Every event of a turn's stream; a reader this quick is never detached (`lagged` fails the test). */
export async function collect(
  stream: AsyncIterable<HubEvent>,
  onEvent?: (e: TurnEvent) => void,
): Promise<TurnEvent[]> {
  const out: TurnEvent[] = [];
  for await (const e of stream) {
    if (e.type === "lagged") throw new Error(`the reader was detached: ${e.dropped} events dropped`);
    out.push(e);
    onEvent?.(e);
  }
  return out;
}

export const types = (events: TurnEvent[]) => events.map((e) => e.type);
