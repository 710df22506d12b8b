/**
 * The live stream: one EventSource for the whole page. Agent events are kept (the newest 1000)
 * in a signal pages read; `lagged` tells them to read back what the console missed.
 */
import { signal } from "@preact/signals";

export interface AgentEvent {
  kind: string;
  agent_id: string;
  session_id: string;
  seq: number;
  [field: string]: unknown;
}

const KEEP = 1000;
export const liveEvents = signal<AgentEvent[]>([]);
export const liveState = signal<"connecting" | "open" | "closed">("closed");
/** Bumped on every lag notice (and every reconnect): pages that show a stream read it back. */
export const resyncs = signal(0);

let source: EventSource | undefined;

export function connectLive(): void {
  if (source !== undefined) return;
  liveState.value = "connecting";
  source = new EventSource("/api/live");
  source.addEventListener("open", () => {
    if (liveState.value !== "connecting") resyncs.value++;
    liveState.value = "open";
  });
  source.addEventListener("error", () => {
    liveState.value = "connecting";
  });
  source.addEventListener("agent_event", (message) => {
    const event = JSON.parse((message as MessageEvent<string>).data) as AgentEvent;
    liveEvents.value = [...liveEvents.value.slice(-(KEEP - 1)), event];
  });
  source.addEventListener("lagged", () => {
    resyncs.value++;
  });
}

export function disconnectLive(): void {
  source?.close();
  source = undefined;
  liveState.value = "closed";
}
