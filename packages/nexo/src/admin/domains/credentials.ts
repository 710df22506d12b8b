/**
 * `nexo/admin/credentials/*` (credentials_crud): channel credentials, many-to-many with agents. A
 * credential is the opaque blob the caller registers for `(channel, instance)`, kept as
 * `<state_dir>/credentials/<channel>/<instance or _default>.json` (0600 in 0700 directories; its
 * string values are given to the redactor so they never reach a log or a transcript), and bound to
 * agents through their `inbound_bindings` in agents.yaml:
 *
 * - register writes the blob, then appends `{plugin: channel, instance}` to each listed agent that
 *   lacks it — one comment-preserving edit, checked with the whole directory (nexo routes each
 *   `(channel, instance)` to one active agent: binding it to two active agents is `-32602`
 *   `invalid_config`, and the blob stays so the call can be retried with other agents);
 * - revoke removes that binding from every agent, then deletes the blob;
 * - list joins the blobs with the agents bound to them.
 *
 * The channel's persister: when the plugin serving the channel offers the `credentials` feature,
 * register runs it around those steps — `validate` first (a refused shape is -32602 with
 * `data.reason_code` `invalid_payload` / `invalid_metadata`, and nothing is written), `persist`
 * after the blob is written (its failure reaches the caller and leaves the blob, so the call can be
 * retried), `probe` last, whose outcome is the reply's `validation` block; a probe that fails is
 * reported there (`connectivity_failed`), never as the call's error. Without a persister —
 * no plugin serves the channel here, or it does not offer the feature — `validation` is null.
 */
import { mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { InvalidParamsError } from "@nexo/wire";
import type { admin } from "@nexo/wire/schemas";
import type { ChannelCredential, ChannelCredentialPersister } from "../../channels/features.js";
import { writeFileAtomic } from "../../config/index.js";
import { AgentsFileSchema } from "../../daemon/config/agents.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";

export const CREDENTIALS_DIR = "credentials";
/** The file of a credential registered without an instance. */
const NO_INSTANCE = "_default";
/** Channel kinds and instances become path segments: nothing that could leave the directory. */
const SAFE_SEGMENT = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

export const credentialsDomain = defineAdminDomain({
  domain: "credentials",
  handlers: ({ daemon, secrets }) =>
    daemon &&
    secrets && {
      "nexo/admin/credentials/list": (params) =>
        viaService(async () => {
          const root = join(secrets.stateDir, CREDENTIALS_DIR);
          const agents = (await daemon.agents.list()).map((agent) => ({
            id: agent.id,
            bindings: agent.inbound_bindings ?? [],
          }));
          const credentials: admin.CredentialSummary[] = [];
          for (const channel of (await names(root)).sort()) {
            if (params?.channel_filter !== undefined && channel !== params.channel_filter) continue;
            for (const file of (await names(join(root, channel))).sort()) {
              if (!file.endsWith(".json")) continue;
              const stem = file.slice(0, -".json".length);
              const instance = stem === NO_INSTANCE ? undefined : stem;
              credentials.push({
                channel,
                ...(instance === undefined ? {} : { instance }),
                agent_ids: agents
                  .filter((agent) =>
                    agent.bindings.some((b) => b.plugin === channel && b.instance === instance),
                  )
                  .map((agent) => agent.id),
              });
            }
          }
          return { credentials };
        }),

      "nexo/admin/credentials/register": ({ channel, instance, agent_ids, payload, metadata }) =>
        viaService(async () => {
          const path = credentialPath(secrets.stateDir, channel, instance);
          const known = new Set((await daemon.agents.list()).map((agent) => agent.id));
          const unknown = agent_ids.filter((id) => !known.has(id));
          if (unknown.length > 0)
            throw new InvalidParamsError(
              `invalid params: agent_ids: no agent ${unknown.map((id) => `"${id}"`).join(", ")}`,
            );
          const persister = daemon.channels.optionalFeature(channel, "credentials");
          const credential: ChannelCredential = {
            instance: instance ?? null,
            payload,
            metadata: metadata ?? {},
          };
          if (persister !== undefined) await validate(persister, channel, credential);
          await mkdir(join(secrets.stateDir, CREDENTIALS_DIR, channel), { recursive: true, mode: 0o700 });
          const blob = {
            channel,
            ...(instance === undefined ? {} : { instance }),
            payload,
            metadata: metadata ?? {},
          };
          await writeFileAtomic(path, `${JSON.stringify(blob, null, 2)}\n`, { mode: 0o600 });
          for (const value of stringsIn(payload)) secrets.remember?.(value);
          await persister?.persist(credential);
          const binding = { plugin: channel, ...(instance === undefined ? {} : { instance }) };
          await daemon.config.edit("agents", (doc) => {
            const list =
              (
                doc.toJS() as {
                  agents?: { id: string; inbound_bindings?: { plugin: string; instance?: string }[] }[];
                }
              ).agents ?? [];
            list.forEach((agent, index) => {
              if (!agent_ids.includes(agent.id)) return;
              const bindings = agent.inbound_bindings ?? [];
              if (bindings.some((b) => b.plugin === channel && b.instance === instance)) return;
              if (doc.hasIn(["agents", index, "inbound_bindings"]))
                doc.addIn(["agents", index, "inbound_bindings"], doc.createNode(binding));
              else doc.setIn(["agents", index, "inbound_bindings"], doc.createNode([binding]));
            });
          });
          return {
            summary: { channel, ...(instance === undefined ? {} : { instance }), agent_ids },
            validation: persister === undefined ? null : await probe(persister, credential),
          };
        }),

      "nexo/admin/credentials/revoke": ({ channel, instance }) =>
        viaService(async () => {
          const path = credentialPath(secrets.stateDir, channel, instance);
          const unbound: string[] = [];
          await daemon.config.edit("agents", (doc) => {
            const file = AgentsFileSchema.safeParse(doc.toJS());
            const agents = file.success ? file.data.agents : [];
            agents.forEach((agent, index) => {
              const at = agent.inbound_bindings.findIndex(
                (b) => b.plugin === channel && b.instance === instance,
              );
              if (at < 0) return;
              doc.deleteIn(["agents", index, "inbound_bindings", at]);
              unbound.push(agent.id);
            });
          });
          const existed = await rm(path).then(
            () => true,
            (error: NodeJS.ErrnoException) => {
              if (error.code === "ENOENT") return false;
              throw error;
            },
          );
          return { removed: existed, unbound_agents: unbound.sort() };
        }),
    },
});

/** The persister's shape check; a refusal is -32602 naming which half is wrong. */
async function validate(
  persister: ChannelCredentialPersister,
  channel: string,
  credential: ChannelCredential,
): Promise<void> {
  const verdict = await persister.validate(credential);
  if (verdict.valid) return;
  const reason = verdict.reason_code ?? "invalid_payload";
  throw new InvalidParamsError(
    `invalid params: ${reason}: the ${channel} channel refused the credential${verdict.detail ? `: ${verdict.detail}` : ""}`,
    { reason_code: reason, ...(verdict.detail === undefined ? {} : { detail: verdict.detail }) },
  );
}

/** The probe's outcome; a probe that could not run is an unhealthy outcome, never the call's error. */
async function probe(
  persister: ChannelCredentialPersister,
  credential: ChannelCredential,
): Promise<admin.CredentialValidation> {
  try {
    return await persister.probe(credential);
  } catch (error) {
    return {
      probed: false,
      healthy: false,
      reason_code: "connectivity_failed",
      detail: `the probe failed: ${(error as Error).message}`,
    };
  }
}

function credentialPath(stateDir: string, channel: string, instance: string | undefined): string {
  if (!SAFE_SEGMENT.test(channel))
    throw new InvalidParamsError(
      `invalid params: channel: "${channel}" is not a channel kind (a-z, 0-9, _ and -)`,
    );
  if (instance !== undefined && (!SAFE_SEGMENT.test(instance) || instance === NO_INSTANCE))
    throw new InvalidParamsError(
      `invalid params: instance: "${instance}" is not an instance name (a-z, 0-9, _ and -)`,
    );
  return join(stateDir, CREDENTIALS_DIR, channel, `${instance ?? NO_INSTANCE}.json`);
}

async function names(dir: string): Promise<string[]> {
  return readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
}

/** Every string of a JSON value that is long enough to be a secret worth scrubbing. */
function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return value.length >= 8 ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(stringsIn);
  return [];
}
