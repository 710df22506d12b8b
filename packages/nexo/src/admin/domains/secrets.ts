/**
 * `nexo/admin/secrets/write` (secrets_write): store a secret as `<state>/secrets/<NAME>.txt`
 * (0600). The config loader reads that directory into the variables of `${NAME}` (over the
 * environment's), so the next reload — and every start after — resolves it. The value is
 * remembered by the redactor and never reaches the audit log (its field is blanked before the
 * args hash). `overwrote_env` says a value of that name was in force before (stored or in the
 * daemon's environment).
 */
import { InvalidParamsError } from "@nexo/wire";
import { secretNameProblem, writeSecretFile } from "../../config/secret-files.js";
import { defineAdminDomain } from "../domain.js";

export const secretsDomain = defineAdminDomain({
  domain: "secrets",
  handlers: ({ secrets }) =>
    secrets && {
      "nexo/admin/secrets/write": async ({ name, value }) => {
        const problem = secretNameProblem(name);
        if (problem !== undefined) throw new InvalidParamsError(`invalid params: name: ${problem}`);
        if (value.includes("\0")) throw new InvalidParamsError("invalid params: value: must not contain NUL");
        const { path, replaced } = await writeSecretFile(secrets.stateDir, name, value);
        secrets.remember?.(value);
        return { path, overwrote_env: replaced || secrets.env[name] !== undefined };
      },
    },
});
