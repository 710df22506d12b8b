/**
 * `nexo/admin/secrets/write` (secrets_write): store a secret as `<state>/secrets/<NAME>.txt`
 * (0600) and put it in the environment the config's `${NAME}` reads, so the next reload (and every
 * start after) resolves it. The value is remembered by the redactor and never reaches the audit
 * log (its field is blanked before the args hash).
 */
import { InvalidParamsError } from "@nexo/wire";
import { defineAdminDomain } from "../domain.js";
import { secretNameProblem, writeSecretFile } from "../secret-files.js";

export const secretsDomain = defineAdminDomain({
  domain: "secrets",
  handlers: ({ secrets }) =>
    secrets && {
      "nexo/admin/secrets/write": async ({ name, value }) => {
        const problem = secretNameProblem(name);
        if (problem !== undefined) throw new InvalidParamsError(`invalid params: name: ${problem}`);
        if (value.includes("\0")) throw new InvalidParamsError("invalid params: value: must not contain NUL");
        const path = await writeSecretFile(secrets.stateDir, name, value);
        const overwrote = secrets.env[name] !== undefined;
        secrets.env[name] = value;
        secrets.remember?.(value);
        return { path, overwrote_env: overwrote };
      },
    },
});
