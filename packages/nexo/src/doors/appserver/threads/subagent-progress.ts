/**
 * `subagent/progress` for one turn: a full snapshot of every sub-agent the turn started — its
 * label, the tool it runs now, its tokens, whether it ended — built from the engine's
 * `subagent_progress` events (nested sub-agents included, in the order they started).
 *
 * DotCraft sends the snapshot on a 200 ms tick while sub-agents run. Here a snapshot goes out when
 * something changed, at most one per interval: the first change at once, later ones on the
 * interval's edge, so a burst of tool calls costs one message and an idle sub-agent costs none.
 * `close()` sends what is still pending before the turn's last event, so the final snapshot (every
 * sub-agent completed) always precedes `turn/completed` (or failed/cancelled).
 */
import type { SubAgentProgressParams } from "@nexo/wire/schemas/appserver";
import type { TurnEvent } from "../../../engine/events.js";
import type { Emit } from "./projection.js";

type Entry = SubAgentProgressParams["entries"][number];

/** How often a snapshot may go out (DotCraft's tick). */
export const PROGRESS_INTERVAL_MS = 200;

export class SubAgentProgressTracker {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  private lastSent = Number.NEGATIVE_INFINITY;
  private pending = false;

  constructor(
    private readonly threadId: string,
    private readonly turnId: string,
    private readonly send: Emit,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
  ) {}

  update(event: Extract<TurnEvent, { type: "subagent_progress" }>): void {
    this.entries.set(event.sessionId, {
      label: event.label,
      ...(event.currentTool === undefined ? {} : { currentTool: event.currentTool }),
      inputTokens: event.inputTokens,
      outputTokens: event.outputTokens,
      isCompleted: event.completed,
    });
    this.pending = true;
    if (this.timer !== undefined) return;
    const wait = this.lastSent + this.intervalMs - Date.now();
    if (wait <= 0) {
      this.flush();
      return;
    }
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  /**
   * The turn is ending: its sub-agents have ended with it (a cancelled turn stops them before they
   * can say so), so each is shown completed; sends what changed since the last snapshot, if anything.
   */
  close(): void {
    for (const [id, entry] of this.entries) {
      if (entry.isCompleted) continue;
      const { currentTool: _tool, ...rest } = entry;
      this.entries.set(id, { ...rest, isCompleted: true });
      this.pending = true;
    }
    this.flush();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    this.pending = false;
    this.lastSent = Date.now();
    this.send("subagent/progress", {
      threadId: this.threadId,
      turnId: this.turnId,
      entries: [...this.entries.values()].map((entry) => ({ ...entry })),
    });
  }
}
