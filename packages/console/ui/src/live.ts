/**
 * The live stream: one EventSource for the whole page. Agent events are kept (the newest 1000)
 * in a signal pages read. When the daemon reports that the console fell behind
 * (`agent_events_lagged`, naming per stream the seq to read back from), the missed events are read
 * back with agent_events/read from that seq and merged in, so the open page catches up without
 * reloading; a notice naming no stream (too many missed) or a reconnect makes pages read again.
 */
import { signal } from "@preact/signals";
import { rpc } from "./api.js";

export interface AgentEvent {
  kind: string;
  agent_id: string;
  session_id: string;
  seq: number;
  [field: string]: unknown;
}

interface LaggedStream {
  agent_id: string;
  session_id: string;
  since_seq: number;
}

const KEEP = 1000;
/** The most events one catch-up reads back per stream (agent_events/read's own cap). */
const CATCH_UP_LIMIT = 1000;
export const liveEvents = signal<AgentEvent[]>([]);
export const liveState = signal<"connecting" | "open" | "closed">("closed");
/** Bumped on every reconnect (and a lag notice naming no stream): pages that show a stream read it back. */
export const resyncs = signal(0);
/** Events read back after lag notices, for the header (and the tests): the catch-up at work. */
export const caughtUp = signal(0);

/** A pairing challenge's state as the console relays it (its server trims it to these fields). */
export interface PairingStatus {
  challenge_id: string;
  state: "pending" | "qr_ready" | "awaiting_user" | "linked" | "expired" | "cancelled";
  channel?: string;
  instance?: string;
  qr_png_base64?: string;
  /** Linking by phone number: the code to type on the phone (while awaiting_user). */
  pairing_code?: string;
  device_jid?: string;
  error?: string;
}

/** The newest known state of each pairing challenge, by id (pushed ones and ones read back). */
export const pairings = signal<ReadonlyMap<string, PairingStatus>>(new Map());

export function notePairing(status: PairingStatus): void {
  pairings.value = new Map(pairings.value).set(status.challenge_id, status);
}

let source: EventSource | undefined;

function keep(events: readonly AgentEvent[]): void {
  const byKey = new Map(liveEvents.value.map((e) => [`${e.session_id}#${e.seq}`, e]));
  for (const event of events) byKey.set(`${event.session_id}#${event.seq}`, event);
  liveEvents.value = [...byKey.values()].slice(-KEEP);
}

async function catchUp(streams: readonly LaggedStream[]): Promise<void> {
  for (const stream of streams) {
    try {
      const { events } = await rpc("agent_events/read", {
        agent_id: stream.agent_id,
        session_id: stream.session_id,
        since_seq: stream.since_seq,
        limit: CATCH_UP_LIMIT,
      });
      keep(events as AgentEvent[]);
      caughtUp.value += events.length;
    } catch {
      // Not readable (transcripts_read withdrawn, the daemon going away): pages read again instead.
      resyncs.value++;
    }
  }
}

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
    keep([JSON.parse((message as MessageEvent<string>).data) as AgentEvent]);
  });
  source.addEventListener("pairing", (message) => {
    notePairing(JSON.parse((message as MessageEvent<string>).data) as PairingStatus);
  });
  source.addEventListener("lagged", (message) => {
    const notice = JSON.parse((message as MessageEvent<string>).data) as { streams?: LaggedStream[] };
    const streams = notice.streams ?? [];
    if (streams.length === 0) resyncs.value++;
    else void catchUp(streams);
  });
}

export function disconnectLive(): void {
  source?.close();
  source = undefined;
  liveState.value = "closed";
}
