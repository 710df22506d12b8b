/**
 * The idle footprint of the quickstart (issue 15): `nexo start` on a copy of examples/quickstart
 * (one agent, the loopback channel and demo tools plugins, the console microapp), read from /proc
 * once the daemon is ready and has settled. The daemon process alone is the goal's figure; the
 * whole tree (plugins and the console, each its own node process) is reported beside it. The
 * example plugins must run compiled: a TypeScript loader (tsx, ts-node, --experimental-strip-types)
 * on any command line of the tree is reported, since it would make the footprint a loader's.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { NEXO_COMMAND, nexoStartEnv } from "../lib.js";
import { descendants, mallocHeapMB, residentMemory, totalResident } from "./proc.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const MB = 1_000_000;
const TS_LOADER = /\btsx\b|ts-node|--experimental-strip-types|--experimental-transform-types|--loader/;

export interface QuickstartIdle {
  /** The daemon process's VmRSS, MB. */
  daemonMB: number;
  /** Its anonymous (heap, stacks) and file-backed (the node binary's pages) parts, MB. */
  anonMB: number;
  fileMB: number;
  /** glibc's main malloc heap, resident, MB (part of anonMB). */
  mallocHeapMB: number;
  /** The daemon and every process under it, MB. */
  treeMB: number;
  processes: number;
  /** Command lines of the tree that run a TypeScript loader (none expected). */
  tsLoaders: string[];
}

function statusKiB(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match === null ? 0 : Number(match[1]);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** Boots the quickstart, reads its memory after `settleMs`, stops it (SIGTERM) and cleans up. */
export async function quickstartIdle(settleMs: number): Promise<QuickstartIdle> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-bench-quickstart-"));
  cpSync(join(ROOT, "examples/quickstart"), dir, { recursive: true });
  // The copy's relative paths point back into the repository; its state stays in the copy.
  const absolute = (file: string) =>
    writeFileSync(
      join(dir, file),
      readFileSync(join(dir, file), "utf8")
        .replaceAll("../plugins/", join(ROOT, "examples/plugins/"))
        .replaceAll("../../packages/", join(ROOT, "packages/")),
    );
  absolute("plugins.yaml");
  absolute("extensions.yaml");
  writeFileSync(join(dir, "daemon.yaml"), "state_dir: ./state\nhttp:\n  bind: 127.0.0.1:0\n");
  const child = spawn(NEXO_COMMAND, ["start", "--config", dir], {
    env: nexoStartEnv(),
    stdio: ["ignore", "ignore", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  let ready = false;
  let tail = "";
  createInterface({ input: child.stderr }).on("line", (line) => {
    tail = `${tail}${line}\n`.slice(-3000);
    if (line.includes('"msg":"nexo daemon ready')) ready = true;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!ready) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the quickstart daemon exited during boot:\n${tail}`);
      if (Date.now() > deadline) throw new Error(`the quickstart daemon was not ready in time:\n${tail}`);
      await sleep(50);
    }
    await sleep(settleMs);
    const pid = child.pid!;
    const tree = descendants(pid);
    return {
      daemonMB: residentMemory(pid).rssMB,
      anonMB: (statusKiB(pid, "RssAnon") * 1024) / MB,
      fileMB: (statusKiB(pid, "RssFile") * 1024) / MB,
      mallocHeapMB: mallocHeapMB(pid),
      treeMB: residentMemory(pid).rssMB + totalResident(tree).rssMB,
      processes: 1 + tree.length,
      tsLoaders: [pid, ...tree].map(commandLine).filter((line) => TS_LOADER.test(line)),
    };
  } finally {
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(killer);
    process.removeListener("exit", killOnExit);
    rmSync(dir, { recursive: true, force: true });
  }
}
