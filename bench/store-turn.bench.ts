/**
 * The transcript writes of one turn, on a store file (WAL, as the daemon opens it), in CPU time per
 * turn (process.cpuUsage: on a shared machine the wall clock mostly measures the scheduler):
 *   per message — one `append` (one IMMEDIATE transaction: entry, agent event, session touch) for
 *                 every message, as turns wrote before issue 15
 *   per turn    — the groups a turn writes now (engine/turn.ts) when its input is kept durably by
 *                 the caller (the daemon's inbox): a chat turn is one `appendMany`; a one-tool turn
 *                 three writes (the message with the call before it runs, the result before the
 *                 model is asked again, the answer at the end)
 * No goal of its own: it shows what issue 15's "one transaction per turn" saves.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NewTranscriptEntry, Store } from "../packages/nexo/src/store/index.js";
import { type BenchContext, interleave, median, round } from "./lib.js";

const SESSIONS = 100;

function chatTurn(n: number): NewTranscriptEntry[] {
  return [
    {
      role: "user",
      content: [
        { type: "text", text: `Hello, this is message ${n}: could you tell me what the weather is like?` },
      ],
      turnId: `t${n}`,
      sourcePlugin: "telegram",
      senderId: "alice",
      messageId: `m${n}`,
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: `It is sunny with a light breeze, about ${n % 30} degrees. Anything else?` },
      ],
      turnId: `t${n}`,
    },
  ];
}

function toolTurn(n: number): NewTranscriptEntry[] {
  const [user, answer] = chatTurn(n) as [NewTranscriptEntry, NewTranscriptEntry];
  return [
    user,
    {
      role: "assistant",
      content: [{ type: "tool_use", id: `call_${n}`, name: "Read", input: { file_path: "README.md" } }],
      turnId: `t${n}`,
    },
    {
      role: "user",
      content: [
        { type: "tool_result", toolUseId: `call_${n}`, content: "A line of the readme.\n".repeat(20) },
      ],
      turnId: `t${n}`,
    },
    answer,
  ];
}

export default async function storeTurn(ctx: BenchContext): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-bench-store-turn-"));
  const store = Store.open(join(dir, "nexo.db"));
  try {
    const sessions = Array.from({ length: SESSIONS }, () => store.sessions.create({ agentId: "bench" }).id);
    let n = 0;
    const writes = {
      chatPerMessage: (id: string) => {
        for (const entry of chatTurn(n++)) store.transcripts.append(id, entry);
      },
      chatPerTurn: (id: string) => {
        store.transcripts.appendMany(id, chatTurn(n++));
      },
      toolPerMessage: (id: string) => {
        for (const entry of toolTurn(n++)) store.transcripts.append(id, entry);
      },
      toolPerTurn: (id: string) => {
        const [user, call, result, answer] = toolTurn(n++) as NewTranscriptEntry[];
        store.transcripts.appendMany(id, [user!, call!]);
        store.transcripts.append(id, result!);
        store.transcripts.append(id, answer!);
      },
    };
    type Way = keyof typeof writes;
    const cpu: Record<Way, number[]> = {
      chatPerMessage: [],
      chatPerTurn: [],
      toolPerMessage: [],
      toolPerTurn: [],
    };
    const rate = (way: Way, into?: number[]) => async (): Promise<number> => {
      const deadline = performance.now() + ctx.seconds * 1000;
      let turns = 0;
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      while (performance.now() < deadline) {
        writes[way](sessions[turns % SESSIONS]!);
        turns++;
      }
      const used = process.cpuUsage(cpuStart);
      into?.push((used.user + used.system) / turns);
      return turns / ((performance.now() - start) / 1000);
    };
    for (const way of Object.keys(writes) as Way[]) await rate(way)(); // warm-up: JIT, statements, pages
    const samples = await interleave(ctx.reps, {
      chatPerMessage: rate("chatPerMessage", cpu.chatPerMessage),
      chatPerTurn: rate("chatPerTurn", cpu.chatPerTurn),
      toolPerMessage: rate("toolPerMessage", cpu.toolPerMessage),
      toolPerTurn: rate("toolPerTurn", cpu.toolPerTurn),
    });
    const us = (way: Way) => Math.round(median(cpu[way]));
    ctx.log(
      `CPU per turn: chat ${us("chatPerMessage")} us per message -> ${us("chatPerTurn")} us per turn; one-tool ${us("toolPerMessage")} -> ${us("toolPerTurn")} us`,
    );
    for (const [perMessage, perTurn, label] of [
      ["chatPerMessage", "chatPerTurn", "chat turn (2 messages; 2 transactions -> 1)"],
      ["toolPerMessage", "toolPerTurn", "one-tool turn (4 messages; 4 transactions -> 3)"],
    ] as const) {
      ctx.record({
        benchmark: "store-turn",
        name: `transcript writes ${label}`,
        metric: "CPU time per turn, grouped writes",
        value: us(perTurn),
        unit: "us",
        samples: cpu[perTurn].map(Math.round),
        ratios: {
          per_message_cpu_us: us(perMessage),
          "per_turn_cpu/per_message_cpu": round(median(cpu[perTurn]) / median(cpu[perMessage])),
          per_turn_turns_per_s: Math.round(median(samples[perTurn])),
          per_message_turns_per_s: Math.round(median(samples[perMessage])),
        },
      });
    }
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
