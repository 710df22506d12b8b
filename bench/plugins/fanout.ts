/**
 * The fan-out benchmark's fleet: N counting plugins (bench/plugins/fanout/plugin.ts, one temp
 * plugin dir each) on one in-process broker, each behind its own PluginHost and BrokerBridge, the
 * way the daemon runs them. Bridges can be switched on and off between samples, so one run can
 * compare "nine", "ten" and "nine plus a stalled one" on the same processes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEvent } from "../../packages/nexo/src/broker/event.js";
import { LocalBroker } from "../../packages/nexo/src/broker/local.js";
import { BrokerBridge } from "../../packages/nexo/src/extensions/plugins/bridge.js";
import { PluginHost } from "../../packages/nexo/src/extensions/plugins/host.js";
import { loadPluginManifest } from "../../packages/nexo/src/extensions/plugins/manifest.js";
import { invokePluginTool } from "../../packages/nexo/src/extensions/plugins/tool.js";
import { silentLogger } from "./contenders.js";

const PLUGIN = fileURLToPath(new URL("./fanout/plugin.ts", import.meta.url));
const TSX = import.meta.resolve("tsx");
export const FANOUT_TOPIC = "plugin.outbound.fan";
/** Below the bridge's queue depth (64): a paced publisher never makes a healthy plugin drop. */
const BATCH = 48;
const START_BATCH = 4;

export interface Member {
  id: string;
  host: PluginHost;
  bridge: BrokerBridge;
  active: boolean;
}

function manifest(id: string): string {
  return [
    "[plugin]",
    `id = "${id}"`,
    'version = "0.1.0"',
    `name = "Fan-out ${id}"`,
    'description = "Counts broker events"',
    'min_nexo_version = ">=0.1.0"',
    "",
    "[plugin.entrypoint]",
    `command = ${JSON.stringify(process.execPath)}`,
    `args = ["--conditions=@nexo/source", "--import", ${JSON.stringify(TSX)}, ${JSON.stringify(PLUGIN)}]`,
    "",
    "[[plugin.channels.register]]",
    'kind = "fan"',
    'adapter = "FanOut"',
    "",
    "[plugin.extends]",
    `tools = ["${id}_count"]`,
    "",
  ].join("\n");
}

export class Fleet {
  readonly broker = new LocalBroker({ logger: silentLogger as never });
  readonly members: Member[] = [];
  /** Every host created, started or not, so that stop() leaves no child behind. */
  private readonly hosts: PluginHost[] = [];
  private readonly root = mkdtempSync(join(tmpdir(), "nexo-bench-fanout-"));

  /** Starts `healthy` counting plugins and, with `stalled`, one more that stops reading at its first event. */
  static async start(healthy: number, stalled: boolean): Promise<Fleet> {
    const fleet = new Fleet();
    const ids = Array.from({ length: healthy }, (_, i) => `fan${i}`);
    if (stalled) ids.push("fan_stalled");
    try {
      // A few at a time: eleven TypeScript children compiling at once on a small machine would
      // only measure the scheduler.
      for (let i = 0; i < ids.length; i += START_BATCH) {
        await Promise.all(ids.slice(i, i + START_BATCH).map((id) => fleet.add(id, id === "fan_stalled")));
      }
    } catch (error) {
      await fleet.stop();
      throw error;
    }
    return fleet;
  }

  private async add(id: string, stall: boolean): Promise<void> {
    const dir = join(this.root, id);
    mkdirSync(dir);
    writeFileSync(join(dir, "nexo-plugin.toml"), manifest(id));
    // Generous: the first start of a child compiles the SDK's TypeScript sources.
    const env = { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: "30000" };
    const loaded = await loadPluginManifest(dir, { env });
    const host = new PluginHost({
      manifest: loaded,
      stateDir: join(this.root, `${id}-state`),
      env,
      operatorEnv: stall ? { FANOUT_STALL: "1" } : {},
      logger: silentLogger,
      // The stalled plugin cannot read its shutdown request; do not wait the default 5 s for it.
      shutdownTimeoutMs: 500,
    });
    this.hosts.push(host);
    await host.start();
    const bridge = new BrokerBridge({
      host,
      broker: this.broker,
      kinds: loaded.channelKinds,
      logger: silentLogger,
    });
    this.members.push({ id, host, bridge, active: false });
  }

  member(id: string): Member {
    const found = this.members.find((m) => m.id === id);
    if (found === undefined) throw new Error(`no plugin ${id} in the fleet`);
    return found;
  }

  /** Subscribes exactly these plugins to the fan-out topic. */
  activate(ids: readonly string[]): void {
    for (const member of this.members) {
      const want = ids.includes(member.id);
      if (want && !member.active) member.bridge.start();
      if (!want && member.active) member.bridge.stop();
      member.active = want;
    }
  }

  async count(id: string): Promise<number> {
    const result = (await invokePluginTool(this.member(id).host, `${id}_count`, {})) as { count: number };
    return result.count;
  }

  /**
   * Publishes for `seconds`, paced by the `measured` plugins' bridges, then waits until every
   * measured child has counted every event. Returns deliveries per second to the measured
   * plugins, and the largest queue the stalled one (if subscribed) had meanwhile.
   */
  async sample(
    measured: readonly string[],
    payload: Record<string, unknown>,
    seconds: number,
  ): Promise<{ rate: number; events: number; maxStalledQueue: number }> {
    const members = measured.map((id) => this.member(id));
    const before = await Promise.all(measured.map((id) => this.count(id)));
    // Per plugin: bridges switched off for a while have delivered less than the others.
    const bases = members.map((m) => m.bridge.stats().delivered);
    const behind = (events: number) =>
      members.some((m, i) => m.bridge.stats().delivered - (bases[i] ?? 0) < events);
    const stalled = this.members.find((m) => m.id === "fan_stalled" && m.active);
    let maxStalledQueue = 0;
    let events = 0;
    const start = performance.now();
    const deadline = start + seconds * 1000;
    while (performance.now() < deadline) {
      for (let i = 0; i < BATCH; i++) {
        this.broker.publish(FANOUT_TOPIC, createEvent({ topic: FANOUT_TOPIC, source: "bench", payload }));
      }
      events += BATCH;
      // Every event is in every measured plugin's pipe before the next batch (and before the
      // count below, which is a request and so is not queued behind the events).
      while (behind(events)) await new Promise((resolve) => setImmediate(resolve));
      if (stalled) maxStalledQueue = Math.max(maxStalledQueue, stalled.bridge.stats().queued);
    }
    const after = await Promise.all(measured.map((id) => this.count(id)));
    const elapsed = (performance.now() - start) / 1000;
    after.forEach((count, i) => {
      const got = count - (before[i] ?? 0);
      if (got !== events) throw new Error(`${measured[i]} counted ${got} of ${events} events`);
    });
    return { rate: (events * measured.length) / elapsed, events, maxStalledQueue };
  }

  async stop(): Promise<void> {
    for (const member of this.members) member.bridge.stop();
    await Promise.all(this.hosts.map((host) => host.stop("benchmark over")));
    await this.broker.close({ drainTimeoutMs: 100 });
    rmSync(this.root, { recursive: true, force: true });
  }
}
