/**
 * The one session service every door and the daemon's router use: sessions created, found,
 * resumed and listed in the store, and opened as engine sessions that keep the store up to date.
 *
 * Opening a record gives an AgentSession whose history is the record's transcript, whose messages
 * are appended to it (each with its turn id, the user message with its origin), and whose approval
 * state — the mode, the "always" grants, the files attached from outside the workspace — is the
 * record's and is saved with it whenever it changes, so a resumed session asks no question the user
 * already answered. What differs between doors (provider, tools, limits, who may approve) comes in
 * as settings; configuration changes go through config.ts, one turn at a time per session through
 * queue.ts.
 */

import type {
  ChatMessage,
  NewSession,
  Session,
  SessionListOptions,
  Store,
  TranscriptEntry,
} from "../../store/index.js";
import { type AgentSettings, createAgentSession } from "../assemble.js";
import type { AgentSession } from "../session.js";
import { storeTranscriptSink } from "../transcript-sink.js";
import type { ApprovalMode } from "../types.js";

/** A session's place: the agent, and the channel, account and contact it talks through. */
export interface SessionPlace {
  agentId: string;
  channel: string | null;
  account: string | null;
  contact: string | null;
}

/** One turn of a stored conversation: the transcript entries that turn wrote, in order. */
export interface StoredTurn {
  /** The engine's id of the turn (null for entries written before turn ids were stored). */
  turnId: string | null;
  entries: TranscriptEntry[];
}

/** A stored session ready to continue: its record, the model's history and the turns it holds. */
export interface ResumedSession {
  record: Session;
  history: ChatMessage[];
  turns: StoredTurn[];
}

/** What a door decides about a session it opens; the rest comes from the record. */
export interface OpenSettings
  extends Omit<AgentSettings, "sessionId" | "history" | "sink" | "grants" | "readableFiles" | "mode"> {
  /** The approval mode to start in; the record's when absent. */
  mode?: ApprovalMode;
}

export class SessionService {
  constructor(readonly store: Store) {}

  create(session: NewSession): Session {
    return this.store.sessions.create(session);
  }

  get(id: string): Session | undefined {
    return this.store.sessions.get(id);
  }

  /** The session of this place (most recently active), created with `defaults` when there is none. */
  findOrCreate(place: SessionPlace, defaults: Omit<NewSession, keyof SessionPlace> = {}): Session {
    return this.store.sessions.findByKey(place) ?? this.store.sessions.create({ ...defaults, ...place });
  }

  /** The most recently active session of `agentId`. */
  latest(agentId: string): Session | undefined {
    return this.store.sessions.latest({ agentId });
  }

  /** Sessions, most recently active first. */
  list(options: SessionListOptions = {}): Session[] {
    return this.store.sessions.list(options);
  }

  /** Whether the session has any message yet (a session with none may be opened again as new). */
  hasMessages(id: string): boolean {
    return this.store.transcripts.count(id) > 0;
  }

  /** The session `id` with its history and its turns; undefined when there is no such session. */
  resume(id: string): ResumedSession | undefined {
    const record = this.store.sessions.get(id);
    if (!record) return undefined;
    const entries = this.store.transcripts.entries(id);
    const history = entries
      .filter((entry): entry is TranscriptEntry & { role: ChatMessage["role"] } => entry.role !== "system")
      .map((entry) => ({ role: entry.role, content: entry.content }));
    return { record, history, turns: turnsOf(entries) };
  }

  /**
   * The engine session of `record`: its transcript as history, its approval state, persisted as
   * it changes. Each call builds a new engine session; callers keep the one they run turns on.
   * `history` saves reading the transcript again when the caller has just resumed it.
   */
  open(record: Session, settings: OpenSettings, history?: ChatMessage[]): AgentSession {
    const { store } = this;
    const { mode, ...rest } = settings;
    const session = createAgentSession({
      ...rest,
      sessionId: record.id,
      history: history ?? store.transcripts.messages(record.id),
      sink: storeTranscriptSink(store.transcripts),
      mode: mode ?? record.approvalMode,
      grants: record.alwaysAllow,
      readableFiles: record.readableFiles,
    });
    session.policy.onChange = () => {
      store.sessions.update(record.id, {
        approvalMode: session.policy.mode,
        alwaysAllow: session.policy.grants,
      });
    };
    return session;
  }

  /**
   * Lets Read open these attached files (real paths outside the workspace) in `session`, and saves
   * that with its record so a resumed session can still read them.
   */
  attach(session: AgentSession, realPaths: Iterable<string>): void {
    if (session.allowReading(realPaths).length > 0) {
      this.store.sessions.update(session.id, { readableFiles: [...session.readableFiles] });
    }
  }
}

/**
 * Transcript entries grouped by the turn that wrote them, in order. Entries without a turn id (kept
 * from before turn ids were stored) start a turn at each user message that is not only tool results.
 */
export function turnsOf(entries: readonly TranscriptEntry[]): StoredTurn[] {
  const turns: StoredTurn[] = [];
  for (const entry of entries) {
    const last = turns.at(-1);
    const continues =
      last !== undefined &&
      (entry.turnId === null
        ? last.turnId === null &&
          !(entry.role === "user" && entry.content.some((b) => b.type !== "tool_result"))
        : entry.turnId === last.turnId);
    if (continues) last.entries.push(entry);
    else turns.push({ turnId: entry.turnId, entries: [entry] });
  }
  return turns;
}
