/**
 * The binding table: which agent owns which (plugin, instance). Built once per config; a message
 * is matched exactly once, and a (plugin, instance) pair has at most one owner — the config loader
 * refuses two active agents on the same binding, so the router never fans out.
 */
export interface Binding {
  plugin: string;
  instance?: string | undefined;
}

export interface BoundAgent {
  id: string;
  active: boolean;
  inbound_bindings: readonly Binding[];
}

const keyOf = (plugin: string, instance: string | undefined) => `${plugin}\u0000${instance ?? ""}`;

export class BindingTable {
  private readonly owners = new Map<string, string>();

  constructor(agents: readonly BoundAgent[]) {
    for (const agent of agents) {
      if (!agent.active) continue;
      for (const binding of agent.inbound_bindings) {
        const key = keyOf(binding.plugin, binding.instance);
        const owner = this.owners.get(key);
        if (owner !== undefined && owner !== agent.id) {
          throw new Error(
            `binding ${binding.plugin}${binding.instance ? `.${binding.instance}` : ""} is claimed by both ${owner} and ${agent.id}`,
          );
        }
        this.owners.set(key, agent.id);
      }
    }
  }

  /** The agent bound to exactly this (plugin, instance); a binding without instance matches only instance-less topics. */
  match(plugin: string, instance: string | undefined): string | undefined {
    return this.owners.get(keyOf(plugin, instance));
  }

  get size(): number {
    return this.owners.size;
  }
}
