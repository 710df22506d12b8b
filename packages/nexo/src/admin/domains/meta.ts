/**
 * `nexo/admin/reload` (agents_crud): validate the whole config directory as it is on disk and swap
 * it into the running daemon — the same hot reload as a file change under the watcher, done now
 * (after a batch of edits, or edits made outside the admin RPC). An invalid directory keeps the
 * running config and answers -32603 with `data {reason: "reload_failed", issues}`, every problem
 * located: the directory is the daemon's state, not the call's params.
 */
import { InternalError } from "@nexo/wire";
import { InvalidConfigError } from "../../daemon/services/index.js";
import { defineAdminDomain } from "../domain.js";
import { adminErrorOf, locatedIssues } from "../service-errors.js";

export const metaDomain = defineAdminDomain({
  domain: "meta",
  handlers: ({ daemon }) =>
    daemon && {
      "nexo/admin/reload": async () => {
        try {
          const { reloadedAt } = await daemon.reload();
          return { reloaded_at_ms: reloadedAt.getTime() };
        } catch (error) {
          if (error instanceof InvalidConfigError)
            throw new InternalError(
              `internal: reload_failed: the config directory is not valid, the running config is kept: ${error.message}`,
              { reason: "reload_failed", issues: locatedIssues(error) },
            );
          throw adminErrorOf(error);
        }
      },
    },
});
