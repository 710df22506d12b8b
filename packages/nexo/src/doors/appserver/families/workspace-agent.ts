/**
 * The workspace's agent: the agent of agents.yaml this server's threads belong to, whose entry the
 * workspace-wide settings edit (`workspace/config/update`'s model and approval policy, which skills
 * `skills/setEnabled` turns on). It is the one appserver.yaml names (`agent:`), else the only agent
 * of agents.yaml — the same rule `nexo start` uses to pick the agent its AppServer serves.
 */
import { AppServerErrorCode as Code } from "@nexo/wire/schemas/appserver";
import type { AgentEntry } from "../../../daemon/services/index.js";
import type { Call } from "../family.js";
import { familyError, viaServices } from "../management.js";
import { servicesOf } from "./managed.js";

/** The workspace's agent as written in agents.yaml, or undefined when none can be told. */
export async function findWorkspaceAgent(call: Call): Promise<AgentEntry | undefined> {
  const agents = await viaServices({}, () => servicesOf(call).agents.list());
  const named = call.host.management?.agent;
  if (named !== undefined) return agents.find((agent) => agent.id === named);
  return agents.length === 1 ? agents[0] : undefined;
}

/** The workspace's agent; -32602 explaining how to name one when none can be told. */
export async function workspaceAgent(call: Call): Promise<AgentEntry> {
  const agent = await findWorkspaceAgent(call);
  if (agent !== undefined) return agent;
  const named = call.host.management?.agent;
  throw familyError(
    Code.invalidParams,
    "Invalid params",
    named === undefined
      ? "this workspace has no single agent: agents.yaml must hold exactly one agent, or appserver.yaml must name the workspace's agent with `agent: <id>`"
      : `appserver.yaml names agent "${named}", which agents.yaml does not have`,
  );
}
