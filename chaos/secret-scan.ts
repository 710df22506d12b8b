/**
 * Attack: secrets planted in the daemon's environment must not be found anywhere (issue 10.19,
 * after 10.8 and 10.9).
 *
 * The daemon starts with an Anthropic and an OpenAI key in its environment (random values, made
 * for this run). Then, through a channel, as any user could:
 * - the model runs Bash that reads every process's /proc/<pid>/environ it can, `env`, and its
 *   parent's environ, into a file in the workspace;
 * - the provider answers with an error whose text echoes the key (as some gateways do);
 * - a user sends a message that contains the OpenAI key.
 * An unsandboxed plugin reads its parent's environ at start-up and writes it to its state dir.
 * While the daemon runs, /proc/<pid>/environ of the daemon and every child is read; after a
 * clean stop, every file under the state directory (SQLite database, WAL, plugin state), the
 * workspace, the daemon's log and every reply the channel delivered are scanned byte by byte.
 *
 * Property: neither key appears anywhere, and the scan did read what the daemon wrote (the
 * transcript holds the Bash output, the log the provider error).
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { endpoint, say } from "../packages/nexo/test/helpers/loopback.js";
import { waitFor } from "../packages/nexo/test/helpers/wait.js";
import { leftBehind, processTree, runAttack } from "./lib.js";
import { chaosDaemon } from "./setup.js";

const ANTHROPIC_KEY = `sk-ant-api03-${randomBytes(24).toString("hex")}`;
const OPENAI_KEY = `sk-proj-${randomBytes(24).toString("hex")}`;
const KEYS = [ANTHROPIC_KEY, OPENAI_KEY];

/** Every regular file below `dir`. */
function filesBelow(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesBelow(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** How many times any key occurs in `bytes` (as written, or in a key's JSON or hex form). */
function occurrences(bytes: Buffer): number {
  let count = 0;
  for (const key of KEYS) {
    for (const form of [
      key,
      Buffer.from(key).toString("hex"),
      Buffer.from(key).toString("base64").slice(0, 40),
    ]) {
      for (let at = bytes.indexOf(form); at !== -1; at = bytes.indexOf(form, at + 1)) count++;
    }
  }
  return count;
}

await runAttack("secret-scan", async (attack) => {
  const dump = [
    "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; done > environ-all.txt",
    "tr '\\0' '\\n' < /proc/$PPID/environ > environ-parent.txt",
    "env > env.txt",
    "wc -l environ-all.txt env.txt",
  ].join("; ");
  const config = await chaosDaemon(attack, {
    script: [
      { match: "dump", tool_calls: [{ name: "Bash", input: { command: dump } }] },
      { match: "environ-all.txt", text: "dumped the environment" },
      {
        match: "echo",
        status: 401,
        message: `invalid x-api-key: ${ANTHROPIC_KEY} (also tried ${OPENAI_KEY})`,
      },
      { match: "remember", text: "noted" },
    ],
    plugins: [
      { dir: new URL("../packages/nexo/test/fixtures/plugins/environ-probe", import.meta.url).pathname },
    ],
    agentExtra: ["approval: { allow: [info, exec] }"],
  });
  const logFile = join(attack.tempDir("log"), "daemon.log");
  const daemon = await config.start({
    logFile,
    env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY, OPENAI_API_KEY: OPENAI_KEY, NEXO_LOG: "debug" },
  });
  const url = await endpoint(config.stateDir);
  const replies: string[] = [];
  replies.push(await say(url, "mallory", "dump the environment"));
  const posted = await fetch(`${url}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ from: "mallory", text: "echo the error" }),
  });
  attack.expect(posted.status === 202, `the channel refused a message: ${posted.status}`);
  await waitFor("the provider error in the log", () =>
    daemon.log().find((line) => line.msg === "turn error" && /401|x-api-key/.test(String(line.err))),
  );
  replies.push(await say(url, "mallory", `remember my key ${OPENAI_KEY} please`));

  // The environments of the running processes.
  const pids = processTree(daemon.pid);
  let environLeaks = 0;
  for (const pid of pids) {
    try {
      environLeaks += occurrences(readFileSync(`/proc/${pid}/environ`));
    } catch {
      // Exited meanwhile (a Bash command).
    }
  }
  attack.figure("processes whose environ was read (daemon + children)", pids.length);
  attack.figure("keys found in them", environLeaks);
  attack.expect(environLeaks === 0, `a planted key is in /proc/<pid>/environ of the daemon or a child`);

  const stopped = await daemon.stop("SIGTERM");
  attack.expect(stopped.code === 0, `the daemon did not stop cleanly: ${stopped.code}/${stopped.signal}`);

  // Every file the daemon and its tools wrote, the log, the replies.
  const files = [...filesBelow(config.stateDir), ...filesBelow(config.workspace), logFile];
  let bytes = 0;
  const leaking: string[] = [];
  for (const file of files) {
    const content = readFileSync(file);
    bytes += content.length;
    if (occurrences(content) > 0) leaking.push(file);
  }
  const replyLeaks = replies.filter((reply) => occurrences(Buffer.from(reply)) > 0).length;
  attack.figure("files scanned", files.length);
  attack.figure("bytes scanned", bytes, "B");
  attack.figure("files holding a key", leaking.length);
  attack.figure("replies holding a key", replyLeaks);
  attack.expect(leaking.length === 0, `a planted key was found in ${leaking.join(", ")}`);
  attack.expect(replyLeaks === 0, "a reply delivered to the channel holds a planted key");

  // The scan saw what it was meant to see.
  const all = Buffer.concat(files.map((file) => readFileSync(file)));
  const sawDump = readFileSync(join(config.workspace, "environ-all.txt"), "utf8").split("\n").length;
  attack.figure("environment lines the Bash dump collected", sawDump);
  attack.expect(sawDump > 10, "the Bash dump read almost nothing: the attack did not run");
  attack.expect(all.includes("x-api-key"), "the provider's error text is nowhere: the attack did not run");
  attack.expect(
    all.includes("remember my key"),
    "the user's message is nowhere: the scan missed the transcript",
  );
  attack.expect(
    files.some((file) => file.endsWith("environ.json")),
    "the environ-probe plugin left no report: it did not run",
  );
  const left = await leftBehind(config.marker);
  attack.expect(left.length === 0, `processes left behind: ${left.join(", ")}`);
});
