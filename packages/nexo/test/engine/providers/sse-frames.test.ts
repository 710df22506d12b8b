/**
 * The frame path of the SSE reader (`SseParser.read`, sse.ts): a message that is a reader's learnt
 * text message around a piece of text is handed on as that text without being split into lines
 * and parsed. Against the path without it (`push`, then the reader for every message), for both
 * formats: arbitrary streams of learnt text messages (any text, escapes, quotes, controls, any
 * unicode), other chunks, other envelopes, events and line endings, spliced and cut messages, the
 * end marker and what follows it — as bytes cut into reads anywhere — decode to the same events
 * and the same error.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import OpenAI from "openai";
import {
  AnthropicStreamDecoder,
  anthropicEventReader,
} from "../../../src/engine/providers/anthropic-stream.js";
import { OpenAiStreamDecoder, openAiChunkReader } from "../../../src/engine/providers/openai-stream.js";
import { SseParser, type SseReader, type SseSink } from "../../../src/engine/providers/sse.js";
import { Utf8Stream } from "../../../src/engine/providers/utf8-stream.js";
import type { ProviderEvent } from "../../../src/engine/types.js";

interface Format {
  reader(): SseReader<unknown>;
  decoder(): { push(chunk: never): Iterable<ProviderEvent>; finish(): Iterable<ProviderEvent> };
  /** The text chunk's JSON around a marker, as the vendor writes it. */
  text(content: string, variant: number): unknown;
  /** Anything else the stream may carry. */
  others: fc.Arbitrary<unknown>;
  /** Event names the format's messages carry (null: no `event:` line). */
  events: fc.Arbitrary<string | null>;
  /** The text field's name, for splicing raw characters into it. */
  key: string;
}

/** Any text: what needs escaping and what does not, quotes, backslashes, controls, surrogates. */
const anyText = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("word1 word2 ", "", " ", "x") },
  fc.string({ unit: "binary" }),
  fc.string({
    unit: fc.constantFrom(
      "a",
      " ",
      '"',
      "\\",
      "\n",
      "\r",
      "\t",
      "\u0000",
      "é",
      "\ud83d",
      "\ude00",
      "😀",
      "/",
    ),
  }),
);

const openai: Format = {
  reader: () => openAiChunkReader(new Headers(), OpenAI.APIError) as SseReader<unknown>,
  decoder: () => new OpenAiStreamDecoder("openai", "http://x"),
  text: (content, variant) => ({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1796227645,
    model: variant === 0 ? "gpt-x" : "other",
    system_fingerprint: null,
    choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
  }),
  others: fc.oneof(
    fc.constant({ choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }),
    fc.constant({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    fc.record({
      choices: fc.constant([]),
      usage: fc.record({ prompt_tokens: fc.nat(), completion_tokens: fc.nat() }),
    }),
    anyText.map((args) => ({
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "Read", arguments: args } }] },
        },
      ],
    })),
    fc.constant({ error: { message: "overloaded", type: "server_error" } }),
    fc.jsonValue(),
  ),
  events: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, fc.constantFrom("x", "thread.run", "")),
  key: "content",
};

const anthropic: Format = {
  reader: () => anthropicEventReader(new Headers(), Anthropic.APIError) as SseReader<unknown>,
  decoder: () => new AnthropicStreamDecoder("anthropic", "http://x"),
  text: (text, variant) => ({
    type: "content_block_delta",
    index: variant,
    delta: { type: "text_delta", text },
  }),
  others: fc.oneof(
    fc.constant({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    fc.constant({ type: "content_block_stop", index: 0 }),
    fc.constant({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } }),
    fc.constant({ type: "message_stop" }),
    anyText.map((thinking) => ({
      type: "content_block_delta",
      index: 1,
      delta: { type: "thinking_delta", thinking },
    })),
    fc.jsonValue(),
  ),
  events: fc.oneof(
    { weight: 8, arbitrary: fc.constant("content_block_delta") },
    fc.constantFrom(null, "ping", "error", "other", ""),
  ),
  key: "text",
};

/** How a message is written: as vendors do, or with other line endings, spaces, splices, cuts. */
const writing = fc.record({
  eol: fc.oneof({ weight: 8, arbitrary: fc.constant("\n") }, fc.constantFrom("\r\n", "\r")),
  space: fc.oneof({ weight: 8, arbitrary: fc.constant(" ") }, fc.constant("")),
  how: fc.oneof({ weight: 8, arbitrary: fc.constant("plain") }, fc.constantFrom("escaped", "spliced", "cut")),
  noise: fc.oneof(anyText, fc.constantFrom('"', 'a"b', '\\"', "\\", "\\u00", '\\\\"', "\\n", "\u0001")),
  comment: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, fc.constant(true)),
});

function message(
  format: Format,
  event: string | null,
  value: unknown,
  w: { eol: string; space: string; how: string; noise: string; comment: boolean },
): string {
  let data = JSON.stringify(value) ?? "null";
  if (w.how === "escaped") data = data.replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
  else if (w.how === "cut") data = data.slice(0, data.length >> 1);
  else if (w.how === "spliced") {
    const field = `"${format.key}":"`;
    const at = data.indexOf(field);
    if (at !== -1) data = data.slice(0, at + field.length) + w.noise + data.slice(at + field.length);
  }
  const { eol, space } = w;
  return `${w.comment ? `: keep-alive${eol}` : ""}${event === null ? "" : `event:${space}${event}${eol}`}data:${space}${data}${eol}${eol}`;
}

/** A stream's bytes: mostly text messages of one envelope, and anything else between them. */
const stream = (format: Format) =>
  fc
    .array(
      fc.oneof(
        {
          weight: 10,
          arbitrary: fc
            .tuple(anyText, fc.constant(0), format.events, writing)
            .map(([t, v, e, w]) => message(format, e, format.text(t, v), w)),
        },
        fc
          .tuple(anyText, fc.constant(1), format.events, writing)
          .map(([t, v, e, w]) => message(format, e, format.text(t, v), w)),
        fc.tuple(format.others, format.events, writing).map(([o, e, w]) => message(format, e, o, w)),
        fc.constant("data: [DONE]\n\n"),
      ),
      { minLength: 1, maxLength: 40, size: "medium" },
    )
    .chain((messages) => {
      const bytes = Buffer.from(messages.join(""), "utf8");
      return fc
        .tuple(fc.uniqueArray(fc.integer({ min: 0, max: bytes.length }), { maxLength: 10 }), fc.boolean())
        .map(([cuts, bom]) => {
          const all = bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]) : bytes;
          const at = [0, ...cuts.sort((a, b) => a - b), all.length];
          return at.slice(1).map((end, i) => all.subarray(at[i], end));
        });
    });

type Outcome = { events: ProviderEvent[]; error?: string };

function finish(decoder: ReturnType<Format["decoder"]>, events: ProviderEvent[], failure: unknown): Outcome {
  try {
    if (failure !== undefined) throw failure;
    events.push(
      ...[...decoder.finish()].map((e) => (e.type === "tool_call" ? { ...e, id: e.id.slice(0, 5) } : e)),
    );
    return { events };
  } catch (error) {
    return { events, error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

/** The path without frames: the whole body decoded, split by `push`, every message to the reader. */
function viaPush(format: Format, reads: Buffer[]): Outcome {
  const reader = format.reader();
  const decoder = format.decoder();
  const utf8 = new Utf8Stream();
  const sse = new SseParser();
  const events: ProviderEvent[] = [];
  try {
    const text = reads.map((bytes) => utf8.decode(bytes)).join("") + utf8.end();
    for (const m of sse.push(text)) {
      const chunk = reader(m);
      if (chunk !== undefined) events.push(...decoder.push(chunk as never));
    }
  } catch (error) {
    return finish(decoder, events, error);
  }
  return finish(decoder, events, undefined);
}

/** The providers' path (attempt.ts): each read decoded and given to `read` with the reader's frame. */
function viaRead(format: Format, reads: Buffer[], counter: { texts: number }): Outcome {
  const reader = format.reader();
  const decoder = format.decoder();
  const utf8 = new Utf8Stream();
  const sse = new SseParser();
  const events: ProviderEvent[] = [];
  let failure: unknown;
  const sink: SseSink = {
    frame: reader.frame,
    message(m) {
      if (failure !== undefined) return;
      try {
        const chunk = reader(m);
        if (chunk !== undefined) events.push(...decoder.push(chunk as never));
      } catch (error) {
        failure = error;
      }
    },
    text(piece) {
      counter.texts++;
      if (failure === undefined) events.push(...decoder.push(piece as never));
    },
  };
  for (const bytes of reads) {
    sse.read(utf8.decode(bytes), sink);
    if (failure !== undefined) break;
  }
  if (failure === undefined) sse.read(utf8.end(), sink);
  return finish(decoder, events, failure);
}

for (const [name, format] of [
  ["OpenAI", openai],
  ["Anthropic", anthropic],
] as const) {
  describe(`SSE frames, ${name} format`, () => {
    it("a body cut into reads anywhere decodes as it does with every message parsed", () => {
      const counter = { texts: 0 };
      fc.assert(
        fc.property(stream(format), (reads) => {
          assert.deepEqual(viaRead(format, reads, counter), viaPush(format, reads));
        }),
        { numRuns: 1500 },
      );
      assert.ok(counter.texts > 2000, `${counter.texts} messages were read as their frame's text`);
    });

    it("reads the text messages in its frame by the frame, and the others with the reader", () => {
      const reader = format.reader();
      const texts: string[] = [];
      const messages: unknown[] = [];
      const sink: SseSink = {
        frame: reader.frame,
        message: (m) => messages.push(reader(m)),
        text: (piece) => texts.push(piece),
      };
      const w = { eol: "\n", space: " ", how: "plain", noise: "", comment: false };
      const event = name === "OpenAI" ? null : "content_block_delta";
      const body = [
        message(format, event, format.text("one ", 0), w),
        message(format, event, format.text('two "2"\n', 0), w),
        message(format, event, format.text("three", 1), w),
        message(format, event, format.text("four", 0), { ...w, eol: "\r\n" }),
        message(format, event, format.text("five", 0), w),
        message(format, event, format.text("six", 0), w),
      ].join("");
      new SseParser().read(body, sink);
      // "one" teaches the frame; "three" has another envelope, which the reader learns instead;
      // "four" ends its lines with "\r\n", so it is read with "five" up to the next "\n\n".
      assert.deepEqual(texts, ['two "2"\n', "six"]);
      assert.deepEqual(messages, [
        format.text("one ", 0),
        format.text("three", 1),
        format.text("four", 0),
        "five",
      ]);
    });
  });
}
