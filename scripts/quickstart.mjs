#!/usr/bin/env node
// `npm start`: `nexo chat` on the quickstart config (examples/quickstart: one agent, a loopback chat
// channel plugin and a demo tool plugin). The chat starts the daemon for that directory, talks to
// its agent through the daemon's AppServer, and stops the daemon when you leave (Ctrl-D or /quit).
// The daemon's log goes to .nexo-state/quickstart/daemon.log so the chat keeps the terminal.
// The operator console (packages/console, enabled in examples/quickstart/extensions.yaml) comes up
// with the daemon; the chat prints its login URL under its banner (`nexo console url` prints it again).
//
// With ANTHROPIC_API_KEY or OPENAI_API_KEY set the agent uses that provider; without, nexo's
// offline scripted demo model. NEXO_STATE_DIR overrides the state dir. A second `npm start` while
// one runs joins the running daemon; when another daemon holds the state dir without an AppServer,
// it fails with that daemon's reason and exit status 1, touching nothing of the other run.
//
// The chat runs in this process (the nexo entry imported with the chat's arguments) rather than in
// a child: a child would leave this script's node idling beside it for the whole session (~40 MB
// resident) only to wait for the chat's exit status, which is this process's own this way.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const stateDir = process.env.NEXO_STATE_DIR || join(root, ".nexo-state", "quickstart");
mkdirSync(stateDir, { recursive: true });

const env = process.env;
env.NEXO_STATE_DIR = stateDir;
if (!env.NEXO_QUICKSTART_PROVIDER) {
  if (env.ANTHROPIC_API_KEY) {
    env.NEXO_QUICKSTART_PROVIDER = "anthropic";
    env.NEXO_QUICKSTART_MODEL ??= "claude-sonnet-5";
  } else if (env.OPENAI_API_KEY) {
    env.NEXO_QUICKSTART_PROVIDER = "openai";
    env.NEXO_QUICKSTART_MODEL ??= "gpt-4o";
  }
}
const provider = env.NEXO_QUICKSTART_PROVIDER ?? "scripted (offline demo model)";
process.stdout.write(
  `nexo quickstart — provider: ${provider}; daemon log: ${join(stateDir, "daemon.log")}\n`,
);

const nexo = join(root, "packages/nexo/bin/nexo.js");
const config = join(root, "examples/quickstart");
// As `node bin/nexo.js chat --config …` would start: the entry reads its arguments from argv, and
// the chat starts its daemon through the launcher beside the entry it finds in argv[1].
process.argv = [process.execPath, nexo, "chat", "--config", config];
await import(nexo);
