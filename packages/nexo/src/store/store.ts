/**
 * The store: the one owner of the SQLite connection. Opening it migrates the schema; everything
 * else reaches the database through its repositories, which redact before they write.
 */
import { AgentEventRepository } from "./agent-events.js";
import { AuditRepository } from "./audit.js";
import { type Connection, type ConnectionOptions, IN_MEMORY, openConnection } from "./db.js";
import { StoreError } from "./errors.js";
import { EscalationRepository } from "./escalations.js";
import { type InboxOptions, InboxRepository } from "./inbox.js";
import { MemoryRepository } from "./memory.js";
import { type Migration, type MigrationReport, type MigrationStep, migrate } from "./migrations.js";
import { ProcessingRepository } from "./processing.js";
import { MIGRATIONS } from "./schema.js";
import { SessionRepository } from "./sessions.js";
import { TranscriptRepository } from "./transcripts.js";

export interface StoreOptions extends ConnectionOptions {
  /** The clock for created/updated timestamps; tests pin it. */
  now?: () => Date;
  /** The schema to migrate to; only tests pass anything but the real one. */
  migrations?: readonly Migration[];
  /** Bounds of the durable inbox. */
  inbox?: InboxOptions;
  /** Called before each migration this open applies (the daemon logs it as progress). */
  onMigration?: (step: MigrationStep) => void;
}

export class Store {
  /** The database file, or ":memory:". */
  readonly path: string;
  /** What opening did to the schema. */
  readonly migration: MigrationReport;
  readonly sessions: SessionRepository;
  readonly transcripts: TranscriptRepository;
  readonly memory: MemoryRepository;
  /** The microapp admin audit log. */
  readonly audit: AuditRepository;
  /** The agent event log (transcript appends feed it themselves). */
  readonly agentEvents: AgentEventRepository;
  /** Paused conversations and the inbound held for them (operator takeover). */
  readonly processing: ProcessingRepository;
  readonly escalations: EscalationRepository;
  /** Inbound channel messages not yet handled (issue 10.19). */
  readonly inbox: InboxRepository;
  readonly #db: Connection;

  private constructor(
    path: string,
    db: Connection,
    migration: MigrationReport,
    now: () => Date,
    inbox: InboxOptions | undefined,
  ) {
    this.path = path;
    this.#db = db;
    this.migration = migration;
    this.sessions = new SessionRepository(db, now);
    this.agentEvents = new AgentEventRepository(db);
    this.transcripts = new TranscriptRepository(db, now, this.agentEvents);
    this.memory = new MemoryRepository(db, now);
    this.audit = new AuditRepository(db);
    this.processing = new ProcessingRepository(db);
    this.escalations = new EscalationRepository(db);
    this.inbox = new InboxRepository(db, now, inbox);
  }

  /** Opens (creating if needed) and migrates the database at `path`; ":memory:" for a private one. */
  static open(path: string, options: StoreOptions = {}): Store {
    if (typeof path !== "string" || path === "") {
      throw new StoreError("invalid_argument", 'store path must be a file path or ":memory:"');
    }
    const now = options.now ?? (() => new Date());
    const db = openConnection(path, options);
    try {
      const report = migrate(db, options.migrations ?? MIGRATIONS, now, options.onMigration);
      return new Store(path, db, report, now, options.inbox);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  static inMemory(options: StoreOptions = {}): Store {
    return Store.open(IN_MEMORY, options);
  }

  /** The schema version the database is at. */
  get schemaVersion(): number {
    return this.migration.to;
  }

  get isOpen(): boolean {
    return this.#db.open;
  }

  /**
   * Runs `fn` in one IMMEDIATE transaction, so several repository calls (create a session and its
   * first entry) land together or not at all. Nested calls become savepoints.
   */
  transaction<T>(fn: () => T): T {
    const outermost = !this.#db.inTransaction;
    let result: T;
    try {
      result = this.#db.transaction(fn).immediate();
    } catch (error) {
      if (outermost) this.agentEvents.dropUncommitted();
      throw error;
    }
    // Agent events written inside reach their listeners only now that they are committed.
    if (outermost) this.agentEvents.publishCommitted();
    return result;
  }

  /** Folds the WAL back into the database file; the daemon calls it when idle or shutting down. */
  checkpoint(): void {
    this.#db.pragma("wal_checkpoint(TRUNCATE)");
  }

  close(): void {
    if (!this.#db.open) return;
    try {
      // What the inbox staged for this tick's group commit is written, not dropped.
      this.inbox.flush();
    } finally {
      this.#db.close();
    }
  }
}
