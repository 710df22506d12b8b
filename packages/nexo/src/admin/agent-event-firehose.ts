/**
 * The live side of the agent event log: each stored event pushed as `nexo/notify/agent_event` to
 * the running microapps holding a subscribe capability (holding it is the subscription), and a
 * transcript line also as the contract's `nexo/notify/transcript_appended`.
 *
 * | grant                      | receives                                            |
 * | transcripts_subscribe      | transcript_appended and processing_state_changed     |
 * | agent_events_subscribe_all | every kind                                          |
 *
 * Each microapp has its own bounded queue, sent one frame at a time (a send waits while the
 * microapp's pipe is full), so a microapp that stops reading never holds up the others or grows
 * the daemon's memory. When its queue is full the oldest frame is dropped; before the next frame it
 * gets, it is told `nexo/notify/agent_events_lagged` with, per stream it missed, the `since_seq`
 * to read back from (`agent_events/read` answers the same seq the live frame had).
 */
import type { admin } from "@nexo/wire/schemas";
import type { MicroappOutlet } from "../extensions/microapps/manager.js";
import type { Logger } from "../log.js";
import type { AgentEventRepository, StoredAgentEvent } from "../store/index.js";

/** Frames a microapp may have waiting before the oldest is dropped. */
export const DEFAULT_AGENT_EVENTS_QUEUE = 256;
/** The most streams one lag notice lists; beyond it a microapp re-reads what it follows. */
const MAX_LAGGED_STREAMS = 100;

export interface AgentEventFirehoseOptions {
  events: AgentEventRepository;
  /** The running microapps, asked at each event (microapps come, go and restart). */
  outlets(): readonly MicroappOutlet[];
  /** Per-microapp queue bound; default DEFAULT_AGENT_EVENTS_QUEUE. */
  capacity?: number;
  logger: Pick<Logger, "warn">;
}

type Frame = { method: admin.AdminNotificationName; params: unknown; event: StoredAgentEvent };

/** Which frames of `event` a microapp with `granted` receives. */
export function framesFor(event: StoredAgentEvent, granted: ReadonlySet<string>): Frame[] {
  const all = granted.has("agent_events_subscribe_all");
  const transcripts = granted.has("transcripts_subscribe");
  const frames: Frame[] = [];
  const firehose =
    all ||
    (transcripts && (event.kind === "transcript_appended" || event.kind === "processing_state_changed"));
  if (firehose) frames.push({ method: "nexo/notify/agent_event", params: event, event });
  if (transcripts && event.kind === "transcript_appended")
    frames.push({
      method: "nexo/notify/transcript_appended",
      params: { session_id: event.session_id, role: event.role, body: event.body, ts_ms: event.sent_at_ms },
      event,
    });
  return frames;
}

class Subscriber {
  readonly queue: Frame[] = [];
  /** Per stream: the seq to read back from (the last one before the first dropped frame). */
  readonly lagged = new Map<string, { agent_id: string; session_id: string; since_seq: number }>();
  dropped = 0;
  sending = false;

  constructor(public outlet: MicroappOutlet) {}
}

export class AgentEventFirehose {
  readonly #options: AgentEventFirehoseOptions;
  readonly #capacity: number;
  readonly #subscribers = new Map<string, Subscriber>();
  readonly #unsubscribe: () => void;

  constructor(options: AgentEventFirehoseOptions) {
    this.#options = options;
    this.#capacity = Math.max(1, options.capacity ?? DEFAULT_AGENT_EVENTS_QUEUE);
    this.#unsubscribe = options.events.subscribe((event) => this.#publish(event));
  }

  close(): void {
    this.#unsubscribe();
    this.#subscribers.clear();
  }

  #publish(event: StoredAgentEvent): void {
    for (const outlet of this.#options.outlets()) {
      const frames = framesFor(event, outlet.granted);
      if (frames.length === 0) continue;
      let subscriber = this.#subscribers.get(outlet.id);
      if (subscriber === undefined) {
        subscriber = new Subscriber(outlet);
        this.#subscribers.set(outlet.id, subscriber);
      }
      subscriber.outlet = outlet; // a restarted microapp is a new pipe under the same id
      for (const frame of frames) this.#enqueue(subscriber, frame);
      void this.#pump(subscriber);
    }
  }

  #enqueue(subscriber: Subscriber, frame: Frame): void {
    subscriber.queue.push(frame);
    while (subscriber.queue.length > this.#capacity) {
      const lost = subscriber.queue.shift()!.event;
      subscriber.dropped++;
      if (!subscriber.lagged.has(lost.session_id) && subscriber.lagged.size < MAX_LAGGED_STREAMS)
        subscriber.lagged.set(lost.session_id, {
          agent_id: lost.agent_id,
          session_id: lost.session_id,
          since_seq: lost.seq - 1,
        });
    }
  }

  async #pump(subscriber: Subscriber): Promise<void> {
    if (subscriber.sending) return;
    subscriber.sending = true;
    try {
      while (subscriber.queue.length > 0) {
        if (subscriber.dropped > 0) {
          const notice = { dropped: subscriber.dropped, streams: [...subscriber.lagged.values()] };
          subscriber.dropped = 0;
          subscriber.lagged.clear();
          this.#options.logger.warn(
            { microapp: subscriber.outlet.id, dropped: notice.dropped },
            "microapp fell behind the agent event firehose; told to resync",
          );
          await subscriber.outlet.notify("nexo/notify/agent_events_lagged", notice);
          continue;
        }
        const frame = subscriber.queue.shift()!;
        await subscriber.outlet.notify(frame.method, frame.params);
      }
    } catch (error) {
      // The pipe closed (the microapp stopped or crashed): what was queued for it goes; a restarted
      // microapp resyncs from the log.
      subscriber.queue.length = 0;
      this.#subscribers.delete(subscriber.outlet.id);
      this.#options.logger.warn(
        { microapp: subscriber.outlet.id, err: (error as Error).message },
        "agent events not delivered",
      );
    } finally {
      subscriber.sending = false;
    }
  }
}
