/**
 * The daemon's sessions: one engine session per (agent, channel, account, contact), created on the
 * first message and resumed from the store afterwards (across restarts too), through the engine's
 * session service (engine/sessions/) like every door's. What is the daemon's own here: the agent's
 * settings from agents.yaml (provider, tools with plugins and MCP servers, hooks, approval allow
 * list), channels refusing approvals (nobody is there to answer), and the bound on sessions kept
 * in memory: idle ones beyond the cap are dropped and reloaded when their contact writes again.
 *
 * The engine's session code (the session and its turn loop, approvals, the built-in tools) is
 * loaded with the first session, not at boot: a daemon nobody has written to never runs it, and
 * holding it cost the idle quickstart daemon ~1 MB (issue 15, docs/performance.md). The router
 * waits for `loading()` before its first turn; whoever opens a session outside a turn (the
 * AppServer door) awaits it first.
 */

import type { buildToolRegistry } from "../engine/assemble.js";
import type { HookRunner } from "../engine/hooks.js";
import type { TenantProviders } from "../engine/providers/llm-config.js";
import type { AgentSession } from "../engine/session.js";
import type { MinimalLogger, ToolHost } from "../engine/session-types.js";
import type { SessionPlace, SessionService } from "../engine/sessions/service.js";
import { LayeredTools } from "../engine/tools/layered.js";
import type { ToolRegistry } from "../engine/tools/registry.js";
import type { ApprovalMode, LlmProvider } from "../engine/types.js";
import type { ChatMessage, Session, Store } from "../store/index.js";
import { LongTermMemory } from "./long-term-memory.js";
import type { SessionKey, SessionOpener } from "./routing/router.js";

/** What the daemon needs to know about an agent to run its sessions (from agents.yaml). */
export interface AgentRuntimeSettings {
  id: string;
  tenantId?: string;
  provider: string;
  model: string;
  systemPrompt?: string;
  maxTokens: number;
  maxTurns: number;
  workspace: string;
  /** Exact tool names this agent may use; all when absent. */
  allowedTools?: string[];
  mode: ApprovalMode;
  /** Tool names or categories that never ask. */
  allow: string[];
}

export interface DaemonSessionsOptions {
  store: Store;
  providers: TenantProviders;
  /** Tools every agent shares (plugins, MCP servers); each agent adds its own built-ins and Spawn. */
  shared: ToolRegistry;
  hooks?: HookRunner;
  agents: () => ReadonlyMap<string, AgentRuntimeSettings>;
  logger?: MinimalLogger;
  /** Sessions kept in memory; default 1000. */
  maxLive?: number;
  /** memory.yaml: whether agents get long-term memory and its tools, and the recall limits. */
  longTermMemory?: LongTermMemory;
  /** Wraps each agent's provider, e.g. to time its requests for /metrics. */
  wrapProvider?: (provider: LlmProvider) => LlmProvider;
}

interface SessionEngine {
  buildToolRegistry: typeof buildToolRegistry;
  SessionService: typeof SessionService;
}

/** Loaded once per process, by the first `loading()`. */
let sessionEngine: SessionEngine | undefined;
let engineLoad: Promise<SessionEngine> | undefined;
/** Why the last load failed, for the error of an `open` that comes after it. */
let engineLoadError: unknown;

function loadSessionEngine(): Promise<SessionEngine> {
  engineLoad ??= Promise.all([import("../engine/assemble.js"), import("../engine/sessions/service.js")]).then(
    ([assemble, service]) => {
      sessionEngine = {
        buildToolRegistry: assemble.buildToolRegistry,
        SessionService: service.SessionService,
      };
      return sessionEngine;
    },
    (error: unknown) => {
      // A later call tries again rather than holding on to one failed import.
      engineLoad = undefined;
      engineLoadError = error;
      throw error;
    },
  );
  return engineLoad;
}

/** Channels have nobody to answer a tool_request; this is what the model hears instead. */
export const CHANNEL_APPROVAL_REFUSAL =
  "this tool needs approval and nobody can approve it on a channel; the operator can allow it in agents.yaml (approval.allow)";

export class DaemonSessions implements SessionOpener {
  private readonly live = new Map<string, AgentSession>();
  /** Each agent's own tools (built-ins, Spawn), built once: compiling their schemas is not free. */
  private readonly ownTools = new Map<string, ToolRegistry>();

  /** Records, transcripts and approval state in the store, the same for every door. */
  private serviceOnceLoaded: SessionService | undefined;

  constructor(private readonly options: DaemonSessionsOptions) {}

  /**
   * Loads the engine's session code unless it is loaded already: a promise to await before the
   * first `open`, `openMany`, `renew` or `openFor`, and `undefined` from then on (the router asks
   * before every turn; no promise is made for a turn once the code is there).
   */
  loading(): Promise<void> | undefined {
    if (sessionEngine !== undefined) return undefined;
    return loadSessionEngine().then(() => undefined);
  }

  private engine(): SessionEngine {
    if (sessionEngine === undefined)
      throw new Error(
        engineLoadError === undefined
          ? "the engine's session code is not loaded yet: await DaemonSessions.loading() first"
          : `the engine's session code could not be loaded: ${(engineLoadError as Error).message}`,
        { cause: engineLoadError },
      );
    return sessionEngine;
  }

  private get service(): SessionService {
    this.serviceOnceLoaded ??= new (this.engine().SessionService)(this.options.store);
    return this.serviceOnceLoaded;
  }

  open(key: SessionKey): AgentSession {
    const agent = this.options.agents().get(key.agentId);
    if (!agent) throw new Error(`agent ${key.agentId} is not configured`);
    const id = liveId(key);
    let session = this.live.get(id);
    if (session && session.config.model === agent.model) {
      this.live.delete(id); // re-insert: most recently used last
      this.live.set(id, session);
    } else {
      session = this.load(key, agent);
      this.live.set(id, session);
      this.evict();
    }
    return session;
  }

  /**
   * `open` for several keys at once (the router's messages of one group commit), the store's
   * writes in one transaction: a new contact's session record is one row, and its own commit
   * costs more than the row. Keys already live are left as they are. When anything fails the
   * transaction is rolled back and no session opened here is kept, so no cached session can point
   * at a record that was never committed; the error is thrown for the caller to log.
   */
  openMany(keys: readonly SessionKey[]): void {
    const agents = this.options.agents();
    const fresh = new Map<string, SessionKey>();
    for (const key of keys) {
      const id = liveId(key);
      if (!this.live.has(id) && agents.has(key.agentId)) fresh.set(id, key);
    }
    if (fresh.size < 2) return;
    try {
      this.options.store.transaction(() => {
        for (const key of fresh.values()) this.open(key);
      });
    } catch (error) {
      for (const id of fresh.keys()) {
        const session = this.live.get(id);
        if (session !== undefined && !session.busy) this.live.delete(id);
      }
      throw error;
    }
  }

  /**
   * A person's `/new`: a fresh record for the place, which `findByKey` (newest first) returns from
   * now on, so this and later messages open it; the old record and its transcript stay.
   */
  renew(key: SessionKey): string {
    const agent = this.options.agents().get(key.agentId);
    if (!agent) throw new Error(`agent ${key.agentId} is not configured`);
    const record = this.createRecord(placeOf(key), agent);
    const id = liveId(key);
    this.live.delete(id);
    this.live.set(id, this.build(agent, record, true, undefined, []));
    this.evict();
    return record.id;
  }

  get liveCount(): number {
    return this.live.size;
  }

  /** Drops every cached session (after a config reload changed agents). */
  forget(): void {
    for (const [id, session] of this.live) if (!session.busy) this.live.delete(id);
    this.ownTools.clear();
  }

  /**
   * Drops the cached sessions of these records (their transcript changed under them: an
   * operator's line, held messages written on resume), so the next message reloads them; every
   * other conversation keeps its session. A session running a turn is kept.
   */
  forgetRecords(sessionIds: Iterable<string>): void {
    const ids = new Set(sessionIds);
    for (const [key, session] of this.live) if (ids.has(session.id) && !session.busy) this.live.delete(key);
  }

  /**
   * A session of `agentId` for a conversation whose record another door keeps (an AppServer
   * thread): the agent's model, tools (plugins and MCP servers included), hooks and approval
   * settings, with the record's transcript as history. Not cached here: the door owns it. Unlike
   * channel sessions, a client is there to answer approval requests.
   */
  /** `toolLayers`: tools that come and go while the session lives (an AppServer adapter's). */
  openFor(agentId: string, record: Session, toolLayers?: readonly ToolHost[]): AgentSession {
    const agent = this.options.agents().get(agentId);
    if (!agent) throw new Error(`agent ${agentId} is not configured`);
    return this.build(agent, record, false, toolLayers);
  }

  private load(key: SessionKey, agent: AgentRuntimeSettings): AgentSession {
    const place = placeOf(key);
    const found = this.options.store.sessions.findByKey(place);
    if (found !== undefined) return this.build(agent, found, true);
    const record = this.createRecord(place, agent);
    // Created just now, so its transcript is empty: not read back (a burst of new contacts would
    // otherwise query the store once more per contact for nothing).
    return this.build(agent, record, true, undefined, []);
  }

  /** A new record for a place, with the agent's tenant and approval mode. */
  private createRecord(place: SessionPlace, agent: AgentRuntimeSettings): Session {
    return this.service.create({
      ...place,
      ...(agent.tenantId ? { tenantId: agent.tenantId } : {}),
      approvalMode: agent.mode,
    });
  }

  private build(
    agent: AgentRuntimeSettings,
    record: Session,
    channel: boolean,
    toolLayers?: readonly ToolHost[],
    /** The record's history when the caller knows it (a record just created has none); read from the store otherwise. */
    history?: ChatMessage[],
  ): AgentSession {
    const { store } = this.options;
    const resolved = this.options.providers.resolve(agent.provider, agent.tenantId);
    const provider = this.options.wrapProvider ? this.options.wrapProvider(resolved) : resolved;
    const longTerm = this.options.longTermMemory ?? new LongTermMemory();
    const memory = longTerm.forAgents(store.memory);
    const settings = {
      agentId: agent.id,
      provider,
      model: agent.model,
      maxTokens: agent.maxTokens,
      maxTurns: agent.maxTurns,
      workspace: agent.workspace,
      ...(memory ? { memory } : {}),
      builtins: { memory: longTerm.toolOptions() },
      mode: agent.mode,
      allowList: agent.allow,
    };
    return this.service.open(
      record,
      {
        ...settings,
        ...(agent.tenantId ? { tenantId: agent.tenantId } : {}),
        ...(agent.systemPrompt ? { system: agent.systemPrompt } : {}),
        registry: new LayeredTools([this.toolsOf(agent.id, settings), this.options.shared]),
        ...(toolLayers === undefined ? {} : { toolLayers }),
        ...(this.options.hooks ? { hooks: this.options.hooks } : {}),
        ...(agent.allowedTools ? { toolAllowList: agent.allowedTools } : {}),
        ...(channel ? { approvalsUnavailable: CHANNEL_APPROVAL_REFUSAL } : {}),
        ...(this.options.logger ? { logger: this.options.logger } : {}),
      },
      history,
    );
  }

  private toolsOf(agentId: string, settings: Parameters<typeof buildToolRegistry>[0]): ToolRegistry {
    let tools = this.ownTools.get(agentId);
    if (!tools) {
      tools = this.engine().buildToolRegistry(settings);
      this.ownTools.set(agentId, tools);
    }
    return tools;
  }

  private evict(): void {
    const max = this.options.maxLive ?? 1000;
    for (const [id, session] of this.live) {
      if (this.live.size <= max) return;
      if (!session.busy) this.live.delete(id);
    }
  }
}

/** The store's place of a router key (no account is `null` there). */
function placeOf(key: SessionKey): SessionPlace {
  return { agentId: key.agentId, channel: key.channel, account: key.account ?? null, contact: key.contact };
}

/** The live-session cache's key for a place. */
function liveId(key: SessionKey): string {
  return `${key.agentId}\u0000${key.channel}\u0000${key.account ?? ""}\u0000${key.contact}`;
}
