/**
 * Each visitor's conversation as the widget shows it: what the visitor sent (once nexo took it)
 * and what the agent answered, one JSON line per message under
 * $NEXO_STATE_DIR/visitors/<visitor id>.jsonl (0600). The widget is sent the last lines when it
 * connects, which is how a page reload, a second tab or a restart of the plugin shows the same
 * conversation. nexo keeps the real transcript; this is the visitor's view of it, bounded to the
 * last `limit` messages.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "@nexo/channels-common";

/** A file the widget can show: a link (and a picture for images). */
export interface ShownFile {
  name: string;
  url: string;
  mime_type?: string;
  kind: string;
}

export interface HistoryEntry {
  /** The visitor's own message id, or the outbound message's id. */
  id: string;
  from: "visitor" | "agent";
  text: string;
  files?: ShownFile[];
  at_ms: number;
}

export class VisitorHistory {
  private readonly dir: string;

  constructor(
    stateDir: string,
    private readonly limit: number,
  ) {
    this.dir = join(stateDir, "visitors");
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Whether this visitor ever talked here (only they may be written to). */
  known(visitor: string): boolean {
    return existsSync(this.file(visitor));
  }

  /** The last `limit` messages, oldest first. */
  read(visitor: string): HistoryEntry[] {
    return this.all(visitor).slice(-this.limit);
  }

  private all(visitor: string): HistoryEntry[] {
    if (!this.known(visitor)) return [];
    const entries: HistoryEntry[] = [];
    for (const line of readFileSync(this.file(visitor), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      try {
        entries.push(JSON.parse(line) as HistoryEntry);
      } catch {
        // A line cut by a crash mid-write: the rest of the conversation still shows.
      }
    }
    return entries;
  }

  /** Appends one message; false when a message with this id is there already (a replayed send). */
  append(visitor: string, entry: HistoryEntry): boolean {
    const entries = this.all(visitor);
    if (entries.some((e) => e.id === entry.id)) return false;
    if (entries.length >= this.limit * 2) {
      const kept = [...entries.slice(-(this.limit - 1)), entry];
      writeFileAtomic(this.file(visitor), kept.map((e) => `${JSON.stringify(e)}\n`).join(""));
    } else {
      appendFileSync(this.file(visitor), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    }
    return true;
  }

  private file(visitor: string): string {
    return join(this.dir, `${visitor}.jsonl`);
  }
}
