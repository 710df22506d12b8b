/**
 * The work behind `nexo agent --json-stream`: bootstrap the session, serve the door until stdin
 * ends or a signal arrives, then close everything and exit 0. stdout carries protocol lines only.
 */
import { type AgentFlags, bootstrap, StartupError } from "../doors/jsonstream/bootstrap.js";
import { JsonStreamDoor } from "../doors/jsonstream/door.js";
import { createLogger } from "../log.js";
import { NEXO_VERSION } from "../version.js";

/** How long a finished process waits for stdout to drain before it exits anyway. */
const STDOUT_DRAIN_MS = 2000;

/** A fatal start-up problem: one `error{config_error}` line on stdout, then a non-zero exit. */
function fatal(message: string): never {
  process.stdout.write(
    `${JSON.stringify({ type: "error", msg_id: null, error: { code: "config_error", message, retryable: false } })}\n`,
  );
  process.exit(2);
}

/** The command's options: the session's flags and the mode switch. */
export type AgentRunFlags = AgentFlags & { jsonStream?: boolean };

/**
 * `env` is the CLI's start-up view of the environment (the provider keys are read from it).
 * `readyWritten`: the fast start (agent-fast.ts) has written `ready` for the session these flags
 * name; a start-up problem then still ends the process with `error{config_error}` and status 2.
 */
export async function runAgent(
  options: AgentRunFlags,
  env: NodeJS.ProcessEnv,
  { readyWritten = false }: { readyWritten?: boolean } = {},
): Promise<void> {
  if (!options.jsonStream) fatal("nexo agent needs --json-stream (the only mode it has)");
  const logger = createLogger({ base: { component: "json-stream" } });
  let boot: ReturnType<typeof bootstrap>;
  try {
    boot = bootstrap(options, env, logger);
  } catch (error) {
    if (error instanceof StartupError) fatal(error.message);
    logger.error({ err: (error as Error).stack }, "start-up failed");
    fatal(`start-up failed: ${(error as Error).message}`);
  }
  const door = new JsonStreamDoor({
    input: process.stdin,
    output: process.stdout,
    session: boot.session,
    version: NEXO_VERSION,
    announceSessionId: true,
    readyWritten,
    capabilities: boot.capabilities,
    applyConfig: boot.applyConfig,
    addMcpServer: boot.addMcpServer,
    attach: boot.attach,
    logger,
  });
  const onSignal = (signal: string) => void door.shutdown(`received ${signal}`);
  process.once("SIGTERM", () => onSignal("SIGTERM"));
  process.once("SIGINT", () => onSignal("SIGINT"));
  await door.run();
  await boot.close();
  boot.store.close();
  // stdout may still hold queued lines: let them drain, then leave with success — but a reader
  // that stopped reading cannot keep the process alive.
  setTimeout(() => process.exit(0), STDOUT_DRAIN_MS).unref();
  process.stdout.write("", () => process.exit(0));
}
