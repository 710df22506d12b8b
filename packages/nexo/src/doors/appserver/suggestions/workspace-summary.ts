/**
 * A short description of a workspace for the model that suggests what to do in it: the names at its
 * top level, the head of its README and the titles of its recent threads. Short on purpose — it is
 * one cheap request — and built from names and the README only (no other file is read).
 */
import { createHash } from "node:crypto";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";

const MAX_ENTRIES = 60;
const README_HEAD_CHARS = 1500;
const README_NAMES = ["README.md", "README", "README.txt", "README.rst", "readme.md", "Readme.md"];

export interface WorkspaceSummary {
  /** The text the model reads. */
  text: string;
  /** Changes whenever the text does: the cache key of the suggestions made from it. */
  fingerprint: string;
}

async function topLevel(workspace: string): Promise<string[]> {
  const entries = await readdir(workspace, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => !entry.name.startsWith(".") && entry.name !== "node_modules")
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    .sort()
    .slice(0, MAX_ENTRIES);
}

async function readmeHead(workspace: string): Promise<string | undefined> {
  for (const name of README_NAMES) {
    const handle = await open(join(workspace, name), "r").catch(() => undefined);
    if (handle === undefined) continue;
    try {
      const buffer = Buffer.alloc(README_HEAD_CHARS * 4);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      return buffer.subarray(0, bytesRead).toString("utf8").slice(0, README_HEAD_CHARS);
    } catch {
      return undefined; // a directory named README, an unreadable file: no README to quote
    } finally {
      await handle.close();
    }
  }
  return undefined;
}

export async function summarizeWorkspace(
  workspace: string,
  recentTitles: readonly string[],
  maxItems: number,
): Promise<WorkspaceSummary> {
  const [names, readme] = await Promise.all([topLevel(workspace), readmeHead(workspace)]);
  const parts = [
    `Top level of the workspace: ${names.length === 0 ? "(empty)" : names.join(", ")}`,
    readme === undefined ? "No README." : `Start of the README:\n${readme}`,
    recentTitles.length === 0
      ? "No earlier conversations."
      : `Recent conversations: ${recentTitles.map((t) => JSON.stringify(t)).join(", ")}`,
  ];
  const text = parts.join("\n\n");
  const fingerprint = createHash("sha256").update(`${maxItems}\n${text}`).digest("hex").slice(0, 32);
  return { text, fingerprint };
}
