/**
 * Pictures sent on a channel reach the model: the router reads the files a channel plugin
 * downloaded — only from inside that plugin's state directory — and adds them to the user message
 * as image blocks; a message replayed from the durable inbox still has them. Attacked from the
 * plugin's side: `..`, an absolute path elsewhere, a symlink out, another plugin's directory.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { PNG } from "pngjs";
import { createEvent } from "../../../src/broker/event.js";
import { LocalBroker } from "../../../src/broker/local.js";
import {
  type ChannelAdapter,
  ChannelRegistry,
  type OutboundMessage,
} from "../../../src/channels/registry.js";
import { type AttachmentProblem, inboundImages } from "../../../src/daemon/routing/attachments.js";
import { BindingTable } from "../../../src/daemon/routing/bindings.js";
import { MAX_INBOUND_ATTACHMENTS, parseInboundEvent } from "../../../src/daemon/routing/inbound.js";
import { ReplySender } from "../../../src/daemon/routing/outbound.js";
import { Router } from "../../../src/daemon/routing/router.js";
import { createAgentSession } from "../../../src/engine/assemble.js";
import { MAX_INPUT_IMAGE_BYTES } from "../../../src/engine/image-input.js";
import type { ChatRequest, ContentBlock, LlmProvider, ProviderEvent } from "../../../src/engine/types.js";
import { Store } from "../../../src/store/index.js";

const quiet = { info() {}, warn() {}, error() {} };

function pngBytes(width = 2, height = 2): Buffer {
  const png = new PNG({ width, height });
  png.data.fill(200);
  return PNG.sync.write(png);
}

/** A plugin state directory with a picture, a text file and a second plugin's directory beside it. */
function layout() {
  const root = mkdtempSync(join(tmpdir(), "nexo-inbound-images-"));
  const telegram = join(root, "plugins", "telegram");
  const other = join(root, "plugins", "other");
  mkdirSync(join(telegram, "media"), { recursive: true });
  mkdirSync(other, { recursive: true });
  const photo = join(telegram, "media", "photo.jpg"); // a PNG, whatever its name says
  writeFileSync(photo, pngBytes());
  writeFileSync(join(telegram, "media", "notes.txt"), "just text");
  writeFileSync(join(other, "secret.png"), pngBytes());
  writeFileSync(join(root, "outside.png"), pngBytes());
  return { root, telegram, other, photo };
}

class RecordingProvider implements LlmProvider {
  readonly id = "recording";
  readonly requests: ChatRequest[] = [];
  async *stream(request: ChatRequest): AsyncIterable<ProviderEvent> {
    this.requests.push(structuredClone(request));
    yield { type: "text_delta", text: "seen" };
    yield { type: "stop", reason: "end_turn" };
  }
}

class SilentChannel implements ChannelAdapter {
  readonly owner = "test";
  readonly sent: OutboundMessage[] = [];
  constructor(readonly kind: string) {}
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async sendOutbound(message: OutboundMessage) {
    this.sent.push(message);
    return { messageId: String(this.sent.length), sentAtUnix: 0 };
  }
}

function routerFor(stateDir: string, provider: LlmProvider, store?: Store) {
  const channels = new ChannelRegistry();
  const chat = new SilentChannel("telegram");
  channels.register(chat);
  const router = new Router({
    bindings: new BindingTable([{ id: "ana", active: true, inbound_bindings: [{ plugin: "telegram" }] }]),
    sessions: {
      open: (key) =>
        createAgentSession({
          agentId: key.agentId,
          provider,
          model: "m",
          maxTokens: 100,
          maxTurns: 2,
          workspace: mkdtempSync(join(tmpdir(), "nexo-inbound-images-ws-")),
        }),
      renew: () => assert.fail("no /new here"),
    },
    replies: new ReplySender(channels, new LocalBroker()),
    logger: quiet,
    queueCap: () => 8,
    attachmentRoots: (kind) => (kind === "telegram" ? [stateDir] : []),
    ...(store === undefined ? {} : { inbox: store.inbox, transcripts: store.transcripts }),
  });
  return { router, chat };
}

const imagesOf = (request: ChatRequest | undefined): ContentBlock[] =>
  (request?.messages.at(-1)?.content ?? []).filter((block) => block.type === "image");

describe("inbound pictures", () => {
  test("a picture the channel plugin downloaded reaches the model as an image block", async () => {
    const { telegram, photo } = layout();
    const provider = new RecordingProvider();
    const { router, chat } = routerFor(telegram, provider);
    router.handle(
      "plugin.inbound.telegram",
      createEvent({
        topic: "plugin.inbound.telegram",
        source: "test",
        payload: {
          from: "42",
          text: `what is this?\n[image: ${photo}]`,
          attachments: [
            { kind: "image", path: photo, mime_type: "image/jpeg" },
            { kind: "document", path: join(telegram, "media", "notes.txt") },
          ],
        },
      }),
    );
    await router.drain(10_000);
    const images = imagesOf(provider.requests[0]);
    assert.equal(images.length, 1);
    // The bytes decide the media type, not the name or the plugin's mime_type.
    assert.deepEqual(images[0], {
      type: "image",
      mediaType: "image/png",
      data: pngBytes().toString("base64"),
    });
    assert.equal(chat.sent.length, 1, "answered as usual");
  });

  test("paths leading out of the plugin's state directory are never read", async () => {
    const { root, telegram, other } = layout();
    symlinkSync(join(root, "outside.png"), join(telegram, "media", "link.png"));
    symlinkSync(other, join(telegram, "media", "otherdir"));
    const problems: AttachmentProblem[] = [];
    const attempts = [
      join(root, "outside.png"),
      join(telegram, "..", "other", "secret.png"),
      join(other, "secret.png"),
      join(telegram, "media", "link.png"),
      join(telegram, "media", "otherdir", "secret.png"),
      "../other/secret.png",
    ];
    const images = await inboundImages(
      attempts.map((path) => ({ kind: "image", path })),
      [telegram],
      (problem) => problems.push(problem),
    );
    assert.deepEqual(images, []);
    assert.deepEqual(
      problems.map((p) => p.reason),
      attempts.map(() => "outside_plugin_state"),
    );
  });

  test("what is not a readable picture stays a named file: text, too large, missing, no local plugin", async () => {
    const { telegram, photo } = layout();
    const big = join(telegram, "media", "big.png");
    writeFileSync(big, Buffer.concat([pngBytes(), Buffer.alloc(MAX_INPUT_IMAGE_BYTES)]));
    const problems: AttachmentProblem[] = [];
    const images = await inboundImages(
      [
        { path: join(telegram, "media", "notes.txt") },
        { kind: "image", path: big },
        { kind: "image", path: join(telegram, "media", "gone.png") },
        { kind: "voice", path: photo }, // not declared a picture: left alone
      ],
      [telegram],
      (problem) => problems.push(problem),
    );
    assert.deepEqual(images, []);
    assert.deepEqual(
      problems.map((p) => p.reason),
      ["unreadable"],
      "only the missing file is a problem; the rest are simply not pictures",
    );
    const remote: AttachmentProblem[] = [];
    assert.deepEqual(await inboundImages([{ path: photo }], [], (p) => remote.push(p)), []);
    assert.deepEqual(
      remote.map((p) => p.reason),
      ["no_local_plugin"],
    );
  });

  test("the payload's attachments are read leniently: malformed entries skipped, at most 16 kept", () => {
    const event = (attachments: unknown) =>
      parseInboundEvent(
        "plugin.inbound.telegram",
        createEvent({
          topic: "plugin.inbound.telegram",
          source: "t",
          payload: { from: "1", text: "x", attachments },
        }),
      );
    assert.deepEqual(event(undefined).attachments, []);
    assert.deepEqual(event("nope").attachments, []);
    assert.deepEqual(
      event([
        null,
        3,
        { url: "https://example.com/a.png" },
        { path: "" },
        { path: "a\0b" },
        { path: "/s/a.png", kind: "image", mime_type: "image/png", file_name: "a.png" },
      ]).attachments,
      [{ path: "/s/a.png", kind: "image", mimeType: "image/png", fileName: "a.png" }],
    );
    const many = Array.from({ length: 40 }, (_, i) => ({ path: `/s/${i}.png` }));
    assert.equal(event(many).attachments.length, MAX_INBOUND_ATTACHMENTS);
  });

  test("a message replayed from the durable inbox after a crash still shows its picture", async () => {
    const { telegram, photo } = layout();
    const path = join(mkdtempSync(join(tmpdir(), "nexo-inbound-images-db-")), "nexo.db");
    const before = Store.open(path);
    before.inbox.accept("event\u0000e1", {
      kind: "telegram",
      instance: undefined,
      contact: "42",
      account: undefined,
      senderId: "42",
      messageId: "m1",
      text: "look",
      attachments: [{ kind: "image", path: photo }],
    });
    before.close(); // the daemon died before the turn ran

    const store = Store.open(path);
    assert.deepEqual(
      store.inbox.undone().map((m) => m.attachments),
      [[{ kind: "image", path: photo }]],
    );
    const provider = new RecordingProvider();
    const { router, chat } = routerFor(telegram, provider, store);
    assert.equal(router.replay(), 1);
    await router.drain(10_000);
    assert.equal(imagesOf(provider.requests[0]).length, 1);
    assert.equal(chat.sent.length, 1);
    assert.equal(store.inbox.pending, 0);
    store.close();
  });
});
