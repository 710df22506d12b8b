/**
 * `nexo/admin/escalations/*`: what agents escalated with the `escalate` tool. `list`
 * (escalations_read) newest first, pending by default, clamped to 1000; a tenant filter only sees
 * that tenant's agents' escalations. `resolve` (escalations_resolve) dismisses one (with a reason)
 * or records an operator takeover; `changed` false when nothing was pending on the scope.
 */
import * as admin from "@nexo/wire/schemas/admin";
import { v7 as uuidv7 } from "uuid";
import { defineAdminDomain } from "../domain.js";
import { viaTakeover } from "./processing.js";

export const escalationsDomain = defineAdminDomain({
  domain: "escalations",
  handlers: ({ daemon }) => {
    const escalations = daemon?.escalations;
    return (
      escalations && {
        "nexo/admin/escalations/list": (params) =>
          viaTakeover(() => {
            const limit = Math.min(
              params?.limit || admin.ESCALATIONS_LIST_DEFAULT_LIMIT,
              admin.ESCALATIONS_LIST_MAX_LIMIT,
            );
            const entries = escalations.list({
              state: params?.filter ?? "pending",
              ...(params?.agent_id === undefined ? {} : { agentId: params.agent_id }),
              ...(params?.scope_kind === undefined ? {} : { scopeKind: params.scope_kind }),
              ...(params?.tenant_id === undefined ? {} : { tenantId: params.tenant_id }),
              limit,
            });
            return { entries };
          }),
        "nexo/admin/escalations/resolve": ({ scope, by, dismiss_reason }) =>
          viaTakeover(() => {
            const resolution: admin.ResolvedBy =
              by === "takeover"
                ? { kind: "operator_takeover" }
                : { kind: "operator_dismissed", reason: dismiss_reason ?? "" };
            return { changed: escalations.resolve(scope, resolution), correlation_id: uuidv7() };
          }),
      }
    );
  },
});
