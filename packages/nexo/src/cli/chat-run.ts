/**
 * The work behind `nexo chat`: open what the flags name (chat/launch.ts), initialize, start or resume
 * a thread, then hand the terminal to the conversation loop (chat/repl.ts). On the way out the chat
 * stops whatever it started, so no daemon or server outlives it.
 *
 * Exit status: 0 when the person leaves (or piped input ends); 1 when the server cannot be reached
 * or goes away; 2 for a usage or config problem.
 */
import { join } from "node:path";
import { ChatClient } from "../chat/client.js";
import { ChatLaunchError, type ChatProgress, type ChatTargetFlags, openChatTarget } from "../chat/launch.js";
import { TurnRenderer, useColor } from "../chat/render.js";
import { ChatRepl } from "../chat/repl.js";
import { defaultStateDir } from "../paths.js";
import { consoleLoginUrlOf } from "./console-url.js";

export interface ChatFlags extends ChatTargetFlags {
  resume?: string;
}

function fail(message: string): void {
  process.stderr.write(`nexo chat: ${message}\n`);
}

/**
 * On a terminal a spinner with the time taken; piped, one line on stderr when the step starts and
 * one when it ends, so a log shows how long it took.
 */
async function startProgress(terminal: boolean): Promise<ChatProgress> {
  if (terminal) {
    const { spinner } = await import("@clack/prompts");
    const spin = spinner({ indicator: "timer" });
    return {
      start: (message) => spin.start(message),
      stop: (message, failed) => spin.stop(message, failed ? 1 : 0),
    };
  }
  return {
    start: (message) => process.stderr.write(`nexo chat: ${message}…\n`),
    stop: (message) => process.stderr.write(`nexo chat: ${message}\n`),
  };
}

/** How long the chat waits for a starting console to write its login files. */
const CONSOLE_WAIT_MS = 5_000;

export async function runChat(flags: ChatFlags, env: NodeJS.ProcessEnv): Promise<number> {
  const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true;
  let target: Awaited<ReturnType<typeof openChatTarget>>;
  try {
    target = await openChatTarget(flags, env, await startProgress(terminal));
  } catch (error) {
    if (!(error instanceof ChatLaunchError)) throw error;
    fail(error.message);
    return error.exitCode;
  }
  const renderer = new TurnRenderer(process.stdout, useColor(process.stdout, env));
  const repl = new ChatRepl({
    input: process.stdin,
    output: process.stdout,
    terminal,
    renderer,
    historyFile: join(flags.stateDir ?? defaultStateDir(env), "chat_history"),
  });
  const client = new ChatClient(target.transport, repl, target.workspace);
  // Without a terminal, Ctrl-C arrives as a signal: it stops the turn like the key does.
  const onSigint = () => repl.interruptKey();
  if (!terminal) process.on("SIGINT", onSigint);
  // Told to go (or the terminal closed): end the connection now; what the chat started is stopped below.
  const onLeave = () => client.close();
  process.once("SIGTERM", onLeave);
  process.once("SIGHUP", onLeave);

  let lost: string | undefined;
  const gone = client.closed.then((reason) => {
    lost = reason;
  });
  try {
    const server = await Promise.race([client.initialize(), gone.then(() => undefined)]);
    if (server === undefined) throw new Error(lost ?? "the connection closed");
    const thread =
      flags.resume === undefined
        ? await client.newThread(flags.model)
        : await client.resumeThread(flags.resume);
    if (flags.resume !== undefined && flags.model !== undefined) await client.setModel(flags.model);
    const banner = `nexo chat — ${target.description}; thread ${thread.id}${
      thread.model === undefined ? "" : `, model ${thread.model}`
    }. /help for commands, Ctrl-C stops a turn, Ctrl-D leaves.`;
    // The operator console of the daemon, when it runs one: its login URL before the first prompt.
    const consoleUrl =
      target.stateDir === undefined ? undefined : await consoleLoginUrlOf(target.stateDir, CONSOLE_WAIT_MS);
    const lines = [banner, ...(consoleUrl === undefined ? [] : [`console: ${consoleUrl}`])];
    // On a terminal the banner is part of the chat; piped, stdout carries only the conversation.
    if (terminal) for (const line of lines) renderer.line(renderer.style("dim", line));
    else process.stderr.write(`${lines.join("\n")}\n`);
    await Promise.race([repl.run(client), gone]);
  } catch (error) {
    if (lost === undefined) fail((error as Error).message);
  } finally {
    if (!terminal) process.off("SIGINT", onSigint);
    process.off("SIGTERM", onLeave);
    process.off("SIGHUP", onLeave);
    repl.close();
    client.close();
    await target.stop();
  }
  if (lost !== undefined && lost !== "the chat ended") {
    const log = target.recentLog?.();
    fail(`the server went away: ${lost}${log ? `\n${log}` : ""}`);
    return 1;
  }
  return 0;
}
