/**
 * The agent event push through a real `nexo start` (the built CLI, admin/serve.ts composing the
 * firehose) with a real microapp: the probe granted transcripts_subscribe hears each transcript
 * line of a real agent turn as `nexo/notify/agent_event` (with its stream's seq) and as the
 * contract's `transcript_appended`; NEXO_MICROAPP_AGENT_EVENTS_ENABLED=0 turns the push off;
 * NEXO_MICROAPP_AGENT_EVENTS_QUEUE must be a positive integer.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { startTestDaemon } from "nexo-plugin-sdk/microapp/testing";
import { MICROAPPS_DIR } from "../fixtures/microapps/harness.js";
import { CLI_PATH } from "../helpers/cli.js";

const PROBE = join(MICROAPPS_DIR, "probe/main.mjs");

interface Note {
  method: string;
  params: Record<string, unknown>;
}

async function notesAfterTwoTurns(env: Record<string, string>): Promise<Note[]> {
  const daemon = await startTestDaemon({
    nexo: CLI_PATH,
    env,
    microapps: { ops: { path: PROBE, grants: ["audit_read", "transcripts_subscribe"] } },
  });
  try {
    // The first turn writes transcript lines; the second reads what the probe heard by then.
    assert.equal((await daemon.callTool("ops_notes", {})).success, true);
    const second = await daemon.callTool("ops_notes", {});
    assert.equal(second.success, true, second.text);
    return JSON.parse(second.text) as Note[];
  } finally {
    await daemon.stop();
  }
}

describe("agent events through a real nexo start", () => {
  it("are pushed live to the microapp holding transcripts_subscribe, with per-stream seq", async () => {
    const notes = await notesAfterTwoTurns({ NEXO_MICROAPP_AGENT_EVENTS_QUEUE: "64" });
    const events = notes.filter((n) => n.method === "nexo/notify/agent_event").map((n) => n.params);
    assert.ok(events.length >= 2, JSON.stringify(notes));
    const lines = events.filter((e) => e.kind === "transcript_appended");
    assert.ok(
      lines.some((e) => e.role === "user" && String(e.body).includes("call ops_notes")),
      JSON.stringify(lines),
    );
    const stream = lines.filter((e) => e.session_id === lines[0]!.session_id).map((e) => e.seq as number);
    assert.deepEqual(
      stream,
      stream.map((_, i) => stream[0]! + i),
      "one stream's seqs arrive in order, none missing",
    );
    assert.ok(
      notes.some((n) => n.method === "nexo/notify/transcript_appended"),
      "the contract's transcript_appended too",
    );
  });

  it("NEXO_MICROAPP_AGENT_EVENTS_ENABLED=0 turns the push off", async () => {
    const notes = await notesAfterTwoTurns({ NEXO_MICROAPP_AGENT_EVENTS_ENABLED: "0" });
    assert.deepEqual(
      notes.filter((n) => n.method.startsWith("nexo/notify/")),
      [],
      "no agent event reaches the microapp",
    );
  });

  it("NEXO_MICROAPP_AGENT_EVENTS_QUEUE that is not a positive integer stops the start, naming it", async () => {
    await assert.rejects(
      startTestDaemon({
        nexo: CLI_PATH,
        env: { NEXO_MICROAPP_AGENT_EVENTS_QUEUE: "0" },
        microapps: { ops: { path: PROBE, grants: ["audit_read", "transcripts_subscribe"] } },
        readyTimeoutMs: 60_000,
      }),
      /NEXO_MICROAPP_AGENT_EVENTS_QUEUE must be a positive integer/,
    );
  });
});
