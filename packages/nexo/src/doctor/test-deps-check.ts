/**
 * For contributors: when `nexo doctor` runs inside a nexo clone, it also says which system programs
 * `npm test` needs and which of them are missing here, with the command that installs them. The
 * list is the clone's own scripts/test-deps.json — the file the test step's provisioning reads — so
 * the two can never disagree. Outside a clone (an operator's machine) this check is not offered.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { resolveCommand } from "../extensions/command.js";
import type { Check } from "./checks.js";

const WORKSPACE_NAME = "nexo-workspace";
const DEPS_FILE = join("scripts", "test-deps.json");

interface TestDependency {
  program: string;
  pkg: string;
  why: string;
}

/** The root of the nexo clone that contains `from`, or undefined when `from` is not inside one. */
export function findNexoClone(from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && existsSync(join(dir, DEPS_FILE))) {
      try {
        if ((JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === WORKSPACE_NAME)
          return dir;
      } catch {
        // An unreadable package.json is not our clone; keep walking up.
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function isInstalled(program: string, pathEnv: string | undefined): boolean {
  try {
    resolveCommand(program, { pathEnv });
    return true;
  } catch {
    return false;
  }
}

export function testDependenciesCheck(cloneRoot: string, pathEnv = process.env.PATH): Check {
  return {
    id: "test-deps",
    title: "programs npm test needs (this clone)",
    required: false,
    async run() {
      const { programs } = JSON.parse(readFileSync(join(cloneRoot, DEPS_FILE), "utf8")) as {
        programs: TestDependency[];
      };
      const missing = programs.filter((p) => !isInstalled(p.program, pathEnv));
      if (missing.length === 0) {
        return { status: "ok", detail: `all present: ${programs.map((p) => p.program).join(", ")}` };
      }
      const packages = missing.map((m) => m.pkg).join(" ");
      return {
        status: "warn",
        detail:
          `missing ${missing.map((m) => `${m.program} (${m.why})`).join(", ")}; npm test installs ` +
          `them itself when run as root or with passwordless sudo, otherwise run once: ` +
          `sudo apt-get update && sudo apt-get install -y --no-install-recommends ${packages}`,
      };
    },
  };
}
