/**
 * nexo-plugin-sdk/microapp/testing: test a microapp against a real nexo daemon, from the microapp's
 * own repository. `startTestDaemon` spawns the `nexo` CLI (never imports it: of nexo, the SDK
 * holds only the wire layer, which its packed form carries inside it) on a throwaway config directory granting the capabilities the test names, lets
 * the test talk to an agent that calls the microapp's tools, read the audit log and watch the
 * microapp's process, and stops everything, leaving no process and no file behind.
 *
 *   await using daemon = await startTestDaemon({
 *     microapps: { notes: { path: "./main.py", grants: ["agents_crud"] } },
 *   });
 *   const call = await daemon.callTool("notes_add", { text: "buy milk" });   // through the agent
 *   assert.equal(call.success, true);
 */
export type { AgentToolCall, AgentTurn, ApprovalDecision, ApprovalRequest } from "./agent.js";
export { AgentClient, DEFAULT_TURN_TIMEOUT_MS } from "./agent.js";
export type { ConfigDirOptions, MicroappUnderTest } from "./config-dir.js";
export { DEFAULT_TEST_AGENT } from "./config-dir.js";
export type { AuditTailFilter, DaemonLogLine, MicroappProcess, TestDaemonOptions } from "./daemon.js";
export { startTestDaemon, TestDaemon } from "./daemon.js";
export { findNexoCli, type NexoCommand } from "./nexo-cli.js";
