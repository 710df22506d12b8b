/**
 * Every configured microapp at once: the capability boot diff (a microapp missing a required grant
 * is refused — never spawned — and the log names it and each missing capability), starting the
 * others in parallel (waiting for each one's first attempt only, like plugins), offering their
 * tools and hooks to the engine's registries, serving their own requests through `serve` (the
 * admin RPC frame), pushing notifications to the microapps that hold the capability, applying a
 * new extensions.yaml, restarting one on an operator's request, telling them when agents.yaml
 * changed, reporting status and stopping them. A reload, a restart and the stop run one after the
 * other, never interleaved on the same microapp.
 *
 * One microapp never stops another: a refused, failed or crash-looping microapp shows in the
 * status with its reason and the rest run.
 */
import { join } from "node:path";
import type { JsonRpcPeer } from "@nexo/wire";
import * as microapp from "@nexo/wire/schemas/microapp";
import type { HookRunner } from "../../engine/hooks.js";
import type { ToolRegistry } from "../../engine/tools/registry.js";
import { isoTime } from "../../iso-time.js";
import { createLogger } from "../../log.js";
import type { ProcessGroupRegistry } from "../reaper.js";
import type { RestartPolicy } from "../restart-policy.js";
import type { SupervisorLogger, SupervisorState } from "../supervisor.js";
import { type CapabilityReport, capabilityWarnings, diffCapabilities } from "./capabilities.js";
import type { MicroappDefinition } from "./definition.js";
import { MicroappRefusedError } from "./errors.js";
import { registerMicroappHooks } from "./hook.js";
import { type MicroappErrorRecord, MicroappHost } from "./host.js";
import { agentOnlyOrigin, type OriginResolver, registerMicroappTools } from "./tool.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Who is on the other end of a microapp's pipe, for whatever serves its requests. */
export interface MicroappIdentity {
  readonly id: string;
  /** The operator's grant: what the capability gate allows. */
  readonly granted: ReadonlySet<string>;
}

/** A running microapp as a destination of notifications it is sent one at a time. */
export interface MicroappOutlet extends MicroappIdentity {
  /** Resolves once the frame is handed to the pipe (waits while the pipe is full). */
  notify(method: string, params: unknown): Promise<void>;
}

export interface MicroappManagerOptions {
  definitions: readonly MicroappDefinition[];
  /** Each microapp's state dir is `<stateRoot>/<id>/state`. */
  stateRoot: string;
  env?: Env;
  registries?: { tools?: ToolRegistry; hooks?: HookRunner };
  /** Where a tool call came from (binding, inbound message). Default: the agent only. */
  origin?: OriginResolver;
  /** Installs the handlers of the microapp's own requests on each of its peers (the admin RPC). */
  serve?: (identity: MicroappIdentity, peer: JsonRpcPeer) => void;
  restart?: Partial<RestartPolicy>;
  shutdownAckMs?: number;
  killAfterMs?: number;
  logger?: SupervisorLogger;
  processGroups?: ProcessGroupRegistry;
}

export interface MicroappStatus {
  id: string;
  /** `refused`: a required capability is not granted; it was never spawned. */
  state: SupervisorState | "refused";
  pid: number | undefined;
  restarts: number;
  version: string | undefined;
  tools: string[];
  hooks: string[];
  granted: string[];
  /** What its plugin.toml `[capabilities.admin]` declares it needs. */
  declared: { required: string[]; optional: string[] };
  warnings: string[];
  lastError: MicroappErrorRecord | undefined;
  stderrTail: string[];
  protocolProblems: Record<string, number>;
}

interface Slot {
  definition: MicroappDefinition;
  report: CapabilityReport;
  host?: MicroappHost;
  removers: Array<() => void>;
  refusal?: MicroappErrorRecord;
}

export class MicroappManager {
  private readonly options: MicroappManagerOptions;
  private readonly logger: SupervisorLogger;
  private slots: Slot[] = [];
  /** The reloads and restarts, one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private stopping = false;

  constructor(options: MicroappManagerOptions) {
    this.options = options;
    this.logger = options.logger ?? createLogger({ base: { component: "microapps" } });
  }

  /** Starts every microapp in parallel; resolves when each started, failed or was refused. Never rejects. */
  async start(): Promise<MicroappStatus[]> {
    this.slots = this.options.definitions.map((definition) => this.slotFor(definition));
    await Promise.all(this.slots.map((slot) => this.startSlot(slot)));
    return this.status();
  }

  /**
   * Applies a new extensions.yaml: microapps removed are stopped, new ones started, and those whose
   * entry, executable or manifest changed are restarted with the new settings.
   */
  update(
    definitions: readonly MicroappDefinition[],
  ): Promise<{ added: string[]; removed: string[]; restarted: string[] }> {
    return this.serially(() => this.apply(definitions));
  }

  /**
   * Restarts one microapp with its entry as it is: its process is stopped (shutdown, SIGTERM,
   * SIGKILL by 10 s) and a new one started, on a fresh restart budget — so a microapp that gave up
   * after a crash loop gets another chance; it counts as a restart (`restarts`, the incarnation
   * number). A refused one is refused again (its grant is extensions.yaml's). Resolves with its status after the new process's first attempt, or
   * undefined for an id extensions.yaml does not have. Never rejects for the microapp's failure:
   * that is in the status.
   */
  restart(id: string, reason = "restarted by an operator"): Promise<MicroappStatus | undefined> {
    return this.serially(async () => {
      const index = this.slots.findIndex((slot) => slot.definition.id === id);
      const slot = this.slots[index];
      if (slot === undefined) return undefined;
      const host = slot.host;
      if (host === undefined) {
        // Refused or not hostable: its checks run again, as at boot.
        const fresh = this.slotFor(slot.definition);
        this.slots[index] = fresh;
        await this.startSlot(fresh);
        return this.statusOf(fresh);
      }
      // The same host: its process line goes on (incarnations, restarts), the start forgets the
      // crash history. Unwired and wired again, so a host that gave up is served again too.
      await this.stopSlot(slot, reason);
      if (!this.stopping) await this.launch(slot, host);
      return this.statusOf(slot);
    });
  }

  private async apply(
    definitions: readonly MicroappDefinition[],
  ): Promise<{ added: string[]; removed: string[]; restarted: string[] }> {
    const next = new Map(definitions.map((definition) => [definition.id, definition]));
    const report = { added: [] as string[], removed: [] as string[], restarted: [] as string[] };
    const kept: Slot[] = [];
    const starting: Slot[] = [];
    for (const slot of this.slots) {
      const wanted = next.get(slot.definition.id);
      if (wanted !== undefined && sameDefinition(wanted, slot.definition)) {
        kept.push(slot);
        continue;
      }
      await this.stopSlot(
        slot,
        wanted === undefined ? "removed from extensions.yaml" : "extensions.yaml changed",
      );
      if (wanted === undefined) report.removed.push(slot.definition.id);
      else {
        report.restarted.push(slot.definition.id);
        starting.push(this.slotFor(wanted));
      }
    }
    const known = new Set(this.slots.map((slot) => slot.definition.id));
    for (const definition of definitions) {
      if (known.has(definition.id)) continue;
      report.added.push(definition.id);
      starting.push(this.slotFor(definition));
    }
    this.slots = [...kept, ...starting];
    await Promise.all(starting.map((slot) => this.startSlot(slot)));
    return report;
  }

  /**
   * agents.yaml changed: every running microapp is told the agent ids now configured
   * (`agents/updated`) and asked for its tools again (`tools/list`, a binding refresh).
   */
  async agentsUpdated(agentIds: readonly string[]): Promise<void> {
    await Promise.all(
      this.running().map(async (host) => {
        try {
          await host.notify("agents/updated", { agent_ids: [...agentIds] });
          await host.refreshTools();
        } catch (error) {
          this.logger.warn({ microapp: host.id, err: (error as Error).message }, "binding refresh failed");
        }
      }),
    );
  }

  /**
   * Pushes a daemon notification to every running microapp holding one of its capabilities (all of
   * them for a notification without one). Returns the ids it was sent to.
   */
  notify(method: microapp.MicroappNotificationName, params: unknown): string[] {
    const capabilities: readonly string[] = microapp.microappNotifications[method].capabilities;
    const sent: string[] = [];
    for (const slot of this.slots) {
      const host = slot.host;
      if (host?.session === undefined) continue;
      if (capabilities.length > 0 && !capabilities.some((name) => slot.report.granted.has(name))) continue;
      host
        .notify(method, params)
        .catch((error: Error) =>
          this.logger.warn({ microapp: host.id, method, err: error.message }, "notification not delivered"),
        );
      sent.push(host.id);
    }
    return sent;
  }

  /** The running microapps with their grants, for a sender that paces itself per microapp. */
  outlets(): MicroappOutlet[] {
    return this.slots.flatMap((slot) => {
      const host = slot.host;
      if (host?.session === undefined) return [];
      return [
        {
          id: host.id,
          granted: slot.report.granted,
          notify: (method, params) => host.notify(method, params),
        },
      ];
    });
  }

  host(id: string): MicroappHost | undefined {
    return this.slots.find((slot) => slot.definition.id === id)?.host;
  }

  status(): MicroappStatus[] {
    return this.slots.map((slot) => this.statusOf(slot));
  }

  /** Stops every microapp (shutdown, SIGTERM, SIGKILL by 10 s) and removes its tools and hooks. */
  async stop(reason = "daemon stopping"): Promise<void> {
    // A restart under way finishes (bounded by its stop and first attempt) and starts nothing new.
    this.stopping = true;
    await this.queue;
    await Promise.all(this.slots.map((slot) => this.stopSlot(slot, reason)));
  }

  private serially<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private statusOf(slot: Slot): MicroappStatus {
    const host = slot.host?.status();
    return {
      id: slot.definition.id,
      state: slot.refusal !== undefined ? "refused" : (host?.state ?? "idle"),
      pid: host?.pid,
      restarts: host?.restarts ?? 0,
      version: host?.version,
      tools: host?.tools ?? [],
      hooks: host?.hooks ?? [],
      granted: [...slot.report.granted],
      declared: {
        required: [...(slot.definition.manifest.capabilities.admin?.required ?? [])],
        optional: [...(slot.definition.manifest.capabilities.admin?.optional ?? [])],
      },
      warnings: [...capabilityWarnings(slot.definition.id, slot.report), ...(host?.warnings ?? [])],
      lastError: slot.refusal ?? host?.lastError,
      stderrTail: host?.stderrTail ?? [],
      protocolProblems: host?.protocolProblems ?? {},
    };
  }

  private running(): MicroappHost[] {
    return this.slots.flatMap((slot) => (slot.host?.session === undefined ? [] : [slot.host]));
  }

  private slotFor(definition: MicroappDefinition): Slot {
    return {
      definition,
      report: diffCapabilities(definition.manifest, definition.entry.capabilities_grant),
      removers: [],
    };
  }

  private async startSlot(slot: Slot): Promise<void> {
    const { definition, report } = slot;
    const id = definition.id;
    if (report.missingRequired.length > 0) {
      const refusal = new MicroappRefusedError(id, report.missingRequired);
      slot.refusal = { code: refusal.code, message: refusal.message, at: isoTime() };
      this.logger.error({ microapp: id, missing: report.missingRequired }, refusal.message);
      return;
    }
    for (const warning of capabilityWarnings(id, report)) this.logger.warn({ microapp: id }, warning);
    const { options } = this;
    let host: MicroappHost;
    try {
      host = new MicroappHost({
        definition,
        stateDir: join(options.stateRoot, id, "state"),
        ...(options.env ? { env: options.env } : {}),
        ...(options.restart ? { restart: options.restart } : {}),
        ...(options.shutdownAckMs !== undefined ? { shutdownAckMs: options.shutdownAckMs } : {}),
        ...(options.killAfterMs !== undefined ? { killAfterMs: options.killAfterMs } : {}),
        logger: this.logger,
        ...(options.processGroups ? { processGroups: options.processGroups } : {}),
      });
    } catch (error) {
      slot.refusal = {
        code: "microapp_invalid",
        message: (error as Error).message,
        at: isoTime(),
      };
      this.logger.error({ microapp: id, err: (error as Error).message }, "microapp cannot be hosted");
      return;
    }
    slot.host = host;
    await this.launch(slot, host);
  }

  /**
   * Serves the microapp's requests and offers its tools and hooks — wired before the start so the
   * very first incarnation's are offered, and again (by the registrations themselves) on every
   * restart — then starts it, waiting for its first attempt only.
   */
  private async launch(slot: Slot, host: MicroappHost): Promise<void> {
    const id = slot.definition.id;
    const serve = this.options.serve;
    if (serve !== undefined) {
      const identity: MicroappIdentity = { id, granted: slot.report.granted };
      slot.removers.push(host.attach((peer) => serve(identity, peer)));
    }
    this.wire(slot, host);
    try {
      await host.start();
    } catch (error) {
      const message = (error as Error).message;
      if (host.state === "backoff" || host.state === "starting")
        this.logger.warn(
          { microapp: id, err: message },
          "microapp did not start on its first attempt; it keeps restarting in the background",
        );
      else this.logger.error({ microapp: id, err: message }, "microapp did not start");
    }
  }

  private wire(slot: Slot, host: MicroappHost): void {
    const { tools, hooks } = this.options.registries ?? {};
    if (tools)
      slot.removers.push(
        registerMicroappTools(host, tools, this.options.origin ?? agentOnlyOrigin, this.logger),
      );
    if (hooks) slot.removers.push(registerMicroappHooks(host, hooks, this.logger));
    const unwire = () => this.unwire(slot);
    host.on("failed", unwire);
    slot.removers.push(() => host.off("failed", unwire));
  }

  private unwire(slot: Slot): void {
    for (const remove of slot.removers.splice(0).reverse()) remove();
  }

  private async stopSlot(slot: Slot, reason: string): Promise<void> {
    this.unwire(slot);
    await slot.host?.stop(reason);
  }
}

/** Whether a reload leaves this microapp as it is. */
function sameDefinition(a: MicroappDefinition, b: MicroappDefinition): boolean {
  return (
    a.executable === b.executable &&
    JSON.stringify(a.entry) === JSON.stringify(b.entry) &&
    JSON.stringify(a.manifest) === JSON.stringify(b.manifest)
  );
}
