/**
 * `nexo/admin/skills/*` (skills_crud): the skills store of the config directory
 * (`skills/<name>/SKILL.md`, a tenant's own under `skills/_tenants/<tenant>/`) — the same store the
 * agents' prompts are built from and the AppServer's skills methods use. `tenant_id` selects the
 * tenant's namespace, absent the global one. A write or delete is followed by a hot reload, so
 * every agent listing the skill answers its next message with the new text; deleting a skill an
 * agent would be left without is refused (-32602 `in_use`, naming the agents).
 */
import { InternalError, InvalidParamsError } from "@nexo/wire";
import type { admin } from "@nexo/wire/schemas";
import { isoTime } from "../../iso-time.js";
import { type Skill, SkillFileError, SkillNameError, SkillPathError } from "../../skills/index.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";

export const skillsDomain = defineAdminDomain({
  domain: "skills",
  handlers: ({ daemon }) =>
    daemon && {
      "nexo/admin/skills/list": (params) =>
        skillCall(async () => {
          const listing = await daemon.skills.list({ tenantId: params?.tenant_id, prefix: params?.prefix });
          return {
            skills: listing.map((skill) => ({
              name: skill.name,
              ...(skill.displayName === undefined ? {} : { display_name: skill.displayName }),
              ...(skill.description === undefined ? {} : { description: skill.description }),
              updated_at: isoTime(skill.updatedAt),
              // A SKILL.md that cannot be read is still listed, with why (a loose field).
              ...(skill.problem === undefined ? {} : { problem: skill.problem }),
            })),
          };
        }),

      "nexo/admin/skills/get": ({ name, tenant_id }) =>
        skillCall(async () => {
          const skill = await daemon.skills.get(name, tenant_id);
          return { skill: skill === undefined ? null : skillRecord(skill) };
        }),

      "nexo/admin/skills/upsert": (params) =>
        skillCall(async () => {
          const { skill, created } = await daemon.skills.upsert({
            name: params.name,
            tenantId: params.tenant_id,
            content: {
              displayName: params.display_name,
              description: params.description,
              maxChars: params.max_chars,
              requires: params.requires,
              body: params.body,
            },
          });
          return { skill: skillRecord(skill), created };
        }),

      "nexo/admin/skills/delete": ({ name, tenant_id }) =>
        skillCall(async () => ({ deleted: (await daemon.skills.delete(name, tenant_id)).removed })),
    },
});

/**
 * The store's own errors: a bad name or tenant is the caller's (-32602); a broken SKILL.md or a
 * symlink where a skill goes is the directory's (-32603).
 */
async function skillCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await viaService(run);
  } catch (error) {
    if (error instanceof SkillNameError)
      throw new InvalidParamsError(`invalid params: ${error.field}: ${error.message}`, {
        reason: error.code,
        field: error.field,
      });
    if (error instanceof SkillPathError)
      throw new InternalError(`internal: ${error.message}`, { reason: error.code });
    if (error instanceof SkillFileError)
      throw new InternalError(`internal: ${error.message}`, { reason: error.code });
    throw error;
  }
}

function skillRecord(skill: Skill): admin.SkillRecord {
  return {
    name: skill.name,
    ...(skill.displayName === undefined ? {} : { display_name: skill.displayName }),
    ...(skill.description === undefined ? {} : { description: skill.description }),
    updated_at: isoTime(skill.updatedAt),
    body: skill.body,
    ...(skill.maxChars === undefined ? {} : { max_chars: skill.maxChars }),
    requires: skill.requires ?? {},
  };
}
