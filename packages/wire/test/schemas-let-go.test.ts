/**
 * Two schemas an idle daemon does not keep: the agent event union is a lazy schema (importing the
 * admin wire builds none of it), and extensions.yaml's schemas are built on use and let go (a
 * collection frees them; they validate the same after it). The first test must stay first: it
 * looks at what the imports alone built.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { z } from "zod";
import "../src/schemas/index.js";
import { AgentEventNotificationSchema, AgentEventSchema } from "../src/schemas/admin/index.js";
import { builtSchemaGroups } from "../src/schemas/lazy.js";
import { ExtensionsFileSchema, MicroappExtensionEntrySchema } from "../src/schemas/microapp/index.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

test("importing the admin wire builds no agent event schema; a parse builds them", () => {
  assert.ok(!builtSchemaGroups().has("admin.agent-events"), "admin.agent-events was built at import");
  const event = {
    kind: "transcript_appended",
    agent_id: "ana",
    session_id: "s1",
    seq: 3,
    role: "user",
    body: "hi",
    sent_at_ms: 1,
    source_plugin: "internal",
  };
  assert.deepEqual(AgentEventSchema.parse(event), event);
  assert.ok(builtSchemaGroups().has("admin.agent-events"));
  // Still open (an unknown kind passes as it came) and still precise (a known kind's issue keeps its path).
  assert.deepEqual(AgentEventNotificationSchema.parse({ kind: "future_kind", x: 1 }), {
    kind: "future_kind",
    x: 1,
  });
  const wrong = AgentEventSchema.safeParse({ ...event, seq: -1 });
  assert.equal(wrong.success, false);
  assert.deepEqual(
    wrong.error?.issues.map((issue) => issue.path),
    [["seq"]],
  );
});

test("extensions.yaml's schemas validate the same after a collection", async () => {
  const inputs = [
    {},
    { extensions: { entries: { "agent-creator": { path: "main.py", capabilities_grant: ["audit_read"] } } } },
    { extensions: { entries: { "Bad Id": { path: "x" } } } },
    { extensions: { entries: { ok: { path: "", timeout_secs: 0 } } } },
    { extension: {} },
  ];
  const outcomes = () =>
    inputs.map((input) => {
      const parsed = ExtensionsFileSchema.safeParse(input);
      return parsed.success ? { ok: parsed.data } : { issues: parsed.error.issues };
    });
  const before = outcomes();
  assert.deepEqual(before[0], { ok: { extensions: { entries: {} } } });
  assert.deepEqual(before[1], {
    ok: {
      extensions: {
        entries: {
          "agent-creator": {
            path: "main.py",
            capabilities_grant: ["audit_read"],
            allow_external_bind: false,
          },
        },
      },
    },
  });
  assert.match(JSON.stringify(before[2]), /invalid_key/);
  assert.match(JSON.stringify(before[3]), /must not be empty/);
  assert.match(JSON.stringify(before[3]), /too_small/);
  assert.match(JSON.stringify(before[4]), /unrecognized_keys/);
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  assert.deepEqual(outcomes(), before);
  assert.deepEqual(MicroappExtensionEntrySchema.parse({ path: "p" }), {
    path: "p",
    capabilities_grant: [],
    allow_external_bind: false,
  });
  assert.ok(MicroappExtensionEntrySchema instanceof z.ZodObject);
});
