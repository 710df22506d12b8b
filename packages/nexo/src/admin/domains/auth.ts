/**
 * `nexo/admin/auth/rotate_token` (auth_rotate): replace the daemon's operator token (daemon.yaml
 * `http.token`, the bearer of its HTTP listener) with `new_token`, or with a random one. The new
 * token takes effect at once and survives restarts; the caller gets its hash, never the token.
 * Holders of credentials_crud are told through `nexo/notify/token_rotated {old_hash, new}`, where
 * `new` is the new token's hash too: a notification never carries the bearer itself.
 */
import { randomBytes } from "node:crypto";
import { InternalError, InvalidParamsError } from "@nexo/wire";
import * as admin from "@nexo/wire/schemas/admin";
import { defineAdminDomain } from "../domain.js";

export const authDomain = defineAdminDomain({
  domain: "auth",
  handlers: ({ operatorToken, notify, now = Date.now }) =>
    operatorToken && {
      "nexo/admin/auth/rotate_token": async (params) => {
        const current = operatorToken.current();
        if (current === undefined)
          throw new InternalError(
            "internal: this daemon has no operator token to rotate (set daemon.yaml http.token)",
            { reason: "auth_not_configured" },
          );
        const next = params?.new_token ?? randomBytes(32).toString("base64url");
        const problem = operatorToken.problem(next);
        if (problem !== undefined) throw new InvalidParamsError(`invalid params: new_token: ${problem}`);
        if (next === current)
          throw new InvalidParamsError("invalid params: new_token: is the token already in force");
        await operatorToken.replace(next);
        const newHash = admin.tokenHash(next);
        notify?.("nexo/notify/token_rotated", { old_hash: admin.tokenHash(current), new: newHash });
        return { ok: true, new_hash: newHash, at_ms: now() };
      },
    },
});
