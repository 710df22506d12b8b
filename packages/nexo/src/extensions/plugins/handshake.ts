/**
 * The `initialize` handshake of one incarnation (plugin contract §4.1, §4.1.1): ask, within the
 * init timeout, check the reply's shape, the plugin's identity and its tool catalog. Every
 * refusal is a typed error; the fatal ones make the supervisor kill the child and give up.
 */
import { Caller, type JsonRpcPeer, RpcError, TimeoutError } from "@nexo/wire";
import * as plugin from "@nexo/wire/schemas/plugin";
import type { SchemaValidators } from "../../engine/tools/schema-validator.js";
import { buildToolCatalog, type ToolCatalog } from "./catalog.js";
import { PluginHandshakeError, PluginIdentityError, PluginInitTimeoutError } from "./errors.js";

export interface HandshakeInput {
  peer: JsonRpcPeer;
  /** The id the plugin was registered under: its manifest's `plugin.id`. */
  pluginId: string;
  /** `[plugin.extends].tools` from our copy of the manifest. */
  declaredTools: readonly string[];
  nexoVersion: string;
  /** nexo's optional features served to this plugin; sent only when there are some. */
  hostFeatures: readonly plugin.HostFeature[];
  initTimeoutMs: number;
  validators: SchemaValidators;
}

export interface HandshakeResult {
  serverVersion: string;
  catalog: ToolCatalog;
  /** Tolerated problems (declared tools not advertised), for logs and `nexo plugin check`. */
  warnings: string[];
  /** The manifest the child echoed (its whole TOML document as JSON). */
  echoedManifest: plugin.EchoedManifest;
  /** nexo's optional channel features the plugin advertised (none for an upstream-SDK plugin). */
  channelFeatures: ReadonlySet<plugin.ChannelFeature>;
}

export async function performHandshake(input: HandshakeInput): Promise<HandshakeResult> {
  const { peer, pluginId } = input;
  const calls = new Caller(
    peer,
    { requests: plugin.pluginMethods },
    {
      invalidReply: (_method, detail) =>
        new PluginHandshakeError(`the reply is not an initialize result: ${detail}`),
    },
  );
  let result: plugin.InitializeResult;
  try {
    result = await calls.request(
      "initialize",
      {
        nexo_version: input.nexoVersion,
        ...(input.hostFeatures.length > 0 ? { host_features: [...input.hostFeatures] } : {}),
      },
      { timeoutMs: input.initTimeoutMs },
    );
  } catch (error) {
    if (error instanceof TimeoutError) throw new PluginInitTimeoutError(input.initTimeoutMs);
    if (error instanceof RpcError) {
      throw new PluginHandshakeError(`the plugin answered with error ${error.code}: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
  if (result.manifest.plugin.id !== pluginId)
    throw new PluginIdentityError(pluginId, result.manifest.plugin.id);
  const { catalog, warnings } = buildToolCatalog(
    pluginId,
    input.declaredTools,
    result.tools,
    input.validators,
  );
  return {
    serverVersion: result.server_version,
    catalog,
    warnings,
    echoedManifest: result.manifest,
    channelFeatures: new Set(result.channel_features ?? []),
  };
}
