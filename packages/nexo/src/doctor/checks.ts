/**
 * `nexo doctor`'s checks, as data: each says whether it is required (a failure makes the command
 * exit non-zero) or advisory (a missing optional tool is a warning).
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

export type CheckStatus = "ok" | "warn" | "fail";

export interface CheckResult {
  id: string;
  title: string;
  required: boolean;
  status: CheckStatus;
  detail: string;
}

export interface Check {
  id: string;
  title: string;
  required: boolean;
  run(): Promise<{ status: CheckStatus; detail: string }>;
}

export const MIN_NODE_MAJOR = 20;
export const MIN_NODE_MINOR = 6;

export function nodeVersionCheck(version = process.versions.node): Check {
  return {
    id: "node",
    title: `Node.js >= ${MIN_NODE_MAJOR}.${MIN_NODE_MINOR}`,
    required: true,
    async run() {
      const [major = 0, minor = 0] = version.split(".").map(Number);
      const ok = major > MIN_NODE_MAJOR || (major === MIN_NODE_MAJOR && minor >= MIN_NODE_MINOR);
      return ok
        ? { status: "ok", detail: `v${version}` }
        : {
            status: "fail",
            detail: `v${version} is too old; install Node.js ${MIN_NODE_MAJOR}.${MIN_NODE_MINOR} or newer`,
          };
    },
  };
}

export function sqliteCheck(): Check {
  return {
    id: "sqlite",
    title: "SQLite native module (better-sqlite3) with FTS5",
    required: true,
    async run() {
      try {
        const require = createRequire(import.meta.url);
        const Database = require("better-sqlite3") as typeof import("better-sqlite3");
        const db = new Database(":memory:");
        try {
          const { v } = db.prepare("select sqlite_version() as v").get() as { v: string };
          db.exec("create virtual table probe using fts5(body)");
          return { status: "ok", detail: `SQLite ${v}, FTS5 available` };
        } finally {
          db.close();
        }
      } catch (error) {
        return {
          status: "fail",
          detail: `cannot load better-sqlite3 (${(error as Error).message.split("\n")[0]}); run npm rebuild better-sqlite3`,
        };
      }
    },
  };
}

/** An optional external program: present and answering `--version`, else a warning with a hint. */
export function programCheck(id: string, title: string, command: string, hint: string): Check {
  return {
    id,
    title,
    required: false,
    async run() {
      const out = spawnSync(command, ["--version"], { encoding: "utf8", timeout: 5000 });
      if (out.error || out.status !== 0) {
        const why = out.error
          ? ((out.error as NodeJS.ErrnoException).code ?? out.error.message)
          : `exit ${out.status}`;
        return { status: "warn", detail: `${command} not usable (${why}); ${hint}` };
      }
      const firstLine = `${out.stdout}${out.stderr}`.trim().split("\n")[0] ?? "";
      return { status: "ok", detail: firstLine };
    },
  };
}

export function defaultChecks(): Check[] {
  return [
    nodeVersionCheck(),
    sqliteCheck(),
    programCheck(
      "bwrap",
      "bubblewrap (plugin sandbox)",
      "bwrap",
      "sandboxed plugins will be refused; install it with apt-get install bubblewrap",
    ),
    programCheck(
      "nats-server",
      "nats-server (multi-machine broker)",
      "nats-server",
      "only needed for broker.yaml type nats; install it with apt-get install nats-server",
    ),
  ];
}

export async function runChecks(checks: Check[]): Promise<CheckResult[]> {
  return Promise.all(
    checks.map(async (check) => {
      let outcome: { status: CheckStatus; detail: string };
      try {
        outcome = await check.run();
      } catch (error) {
        outcome = {
          status: check.required ? "fail" : "warn",
          detail: `check crashed: ${(error as Error).message}`,
        };
      }
      return { id: check.id, title: check.title, required: check.required, ...outcome };
    }),
  );
}

/** The doctor passes unless a required check failed. */
export function doctorPassed(results: CheckResult[]): boolean {
  return results.every((r) => r.status !== "fail");
}
