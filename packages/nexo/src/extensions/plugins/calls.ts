/**
 * How the host's wrappers call a plugin: through the wire's Caller over the contract's method
 * tables, so each call's params and reply are typed by the contract's schemas and every reply is
 * checked before a wrapper reads it. A reply that breaks the schema is PluginProtocolError
 * (`plugin_protocol_error`), naming the method and the offending fields.
 */
import { Caller, type CallerOptions, type RequestSender } from "@nexo/wire";
import * as plugin from "@nexo/wire/schemas/plugin";
import { PluginProtocolError } from "./errors.js";

export type PluginCalls = Caller<typeof plugin.pluginMethods, typeof plugin.pluginNotifications>;

export function pluginCalls(
  sender: RequestSender,
  options: Pick<CallerOptions, "checkParams" | "invalidParams"> = {},
): PluginCalls {
  return new Caller(
    sender,
    { requests: plugin.pluginMethods, notifications: plugin.pluginNotifications },
    { ...options, invalidReply: (method, detail) => new PluginProtocolError(method, detail) },
  );
}
