/**
 * The routing component: the sessions (one engine session per agent and conversation, backed by
 * the store), the router that matches inbound channel messages to agents, the metrics hooks on
 * both, and the subscription to `plugin.inbound.>`. Stopping it unsubscribes first (no new
 * message is taken) and then lets the turns in flight finish within the shutdown grace.
 */
import type { Broker, Subscription } from "../../broker/types.js";
import type { InboundReceipts } from "../../channels/inbound-receipts.js";
import type { PluginManager } from "../../extensions/plugins/manager.js";
import type { Logger } from "../../log.js";
import type { Store } from "../../store/index.js";
import { Part } from "../lifecycle.js";
import type { Metrics } from "../metrics.js";
import { BindingTable } from "../routing/bindings.js";
import { ReplySender } from "../routing/outbound.js";
import { Router, type TurnGate } from "../routing/router.js";
import { DaemonSessions } from "../sessions.js";
import { timedProvider } from "../timed-provider.js";
import type { DaemonAgent, DaemonRegistries } from "./registries.js";

export interface Routing {
  readonly sessions: DaemonSessions;
  readonly router: Router;
}

export interface RoutingDeps {
  store: Part<Store>;
  broker: Part<Broker>;
  plugins: Part<PluginManager>;
  registries: DaemonRegistries;
  metrics: Metrics;
  logger: Logger;
  /** Operator takeover's check before each turn (a paused conversation's messages are held). */
  gate?: TurnGate;
  /** How long in-flight turns may run on after a shutdown request. */
  shutdownGraceMs: number;
  /** Where the router reports each message's outcome to plugins awaiting an acknowledged publish. */
  receipts?: InboundReceipts;
}

/** The router's view of the agents' bindings: active agents only, as agents.yaml lists them. */
export function bindingTableOf(agents: Iterable<DaemonAgent>): BindingTable {
  return new BindingTable(
    [...agents].map((a) => ({ id: a.id, active: a.active, inbound_bindings: a.bindings })),
  );
}

export function routingComponent(deps: RoutingDeps): Part<Routing> {
  const { registries, metrics, logger } = deps;
  let inbound: Subscription | undefined;
  let detachReceipts: (() => void) | undefined;
  return new Part("routing", {
    start: () => {
      const sessions = new DaemonSessions({
        store: deps.store.value,
        providers: registries.providers,
        shared: registries.tools,
        hooks: registries.hooks,
        agents: () => registries.agents,
        longTermMemory: registries.longTermMemory,
        logger,
        wrapProvider: (provider) =>
          timedProvider(provider, (id, outcome, seconds) => metrics.llmRequestFinished(id, outcome, seconds)),
      });
      const router = new Router({
        bindings: bindingTableOf(registries.agents.values()),
        sessions,
        replies: new ReplySender(registries.channels, deps.broker.value),
        logger,
        queueCap: (agentId) => registries.agents.get(agentId)?.queueCap ?? 32,
        ...(deps.gate === undefined ? {} : { gate: deps.gate }),
        attachmentRoots: (kind) => deps.plugins.value.stateDirsServing(kind),
        inbox: deps.store.value.inbox,
        transcripts: deps.store.value.transcripts,
        onTurn: (agentId, reason, seconds) => metrics.turnFinished(agentId, reason, seconds),
        onRouted: (agentId) => metrics.messageRouted(agentId),
        onUnbound: (channel) => metrics.messageUnbound(channel),
        onEvent: (_agentId, event) => {
          // The engine times each call (approval wait excluded); a call stopped before it ran took 0 s.
          if (event.type === "tool_result")
            metrics.toolCallFinished(event.name, event.status, event.durationMs / 1000);
          else if (event.type === "tool_cancelled")
            metrics.toolCallFinished(event.name, "cancelled", (event.durationMs ?? 0) / 1000);
        },
      });
      metrics.collectFrom({ broker: deps.broker.value, plugins: deps.plugins.value, router });
      const receipts = deps.receipts;
      inbound = deps.broker.value.subscribe(
        "plugin.inbound.>",
        (event, topic) => {
          if (receipts === undefined) {
            router.handle(topic, event);
            return;
          }
          // Settled once the message's inbox row is committed (the tick's group commit), never before.
          void router.handleAcked(topic, event).then((outcome) => receipts.settle(event.id, outcome));
        },
        { name: "router" },
      );
      detachReceipts = receipts?.attachRouter();
      return { sessions, router };
    },
    stop: async ({ router }) => {
      // First: acknowledged publishes are refused from now on rather than left to time out.
      detachReceipts?.();
      inbound?.unsubscribe();
      await router.drain(deps.shutdownGraceMs);
    },
  });
}
