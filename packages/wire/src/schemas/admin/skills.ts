/**
 * `nexo/admin/skills/*`: markdown skills (`<root>/<scope>/<name>/SKILL.md`). `tenant_id` selects
 * the tenant's namespace; without it the global namespace (`__global__`) is meant. At runtime a
 * tenant's skill shadows the global one of the same name.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { NonEmptyStringSchema, TenantIdSchema } from "./common.js";

/** A skill name is a directory name, so it is restricted to a safe, portable alphabet. */
export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
/**
 * A fresh skill name schema, for schemas built on use and let go (agents.yaml's): composing the
 * kept {@link SkillNameSchema} would build it for good.
 */
export function skillNameSchema() {
  return z.string().regex(SKILL_NAME_PATTERN, {
    message: "skill names are 1-64 chars of a-z, 0-9 and '-', not starting with '-'",
  });
}
export const SkillNameSchema = lazySchema("admin.skills", skillNameSchema);

export const SkillDepsModeSchema = lazySchema("admin.skills", () => z.enum(["strict", "warn", "disable"]));
export type SkillDepsMode = z.infer<typeof SkillDepsModeSchema>;

/** Dependencies the skill author declared in the SKILL.md frontmatter. */
export const SkillRequiresSchema = lazySchema("admin.skills", () =>
  z.looseObject({
    bins: z.array(z.string()).optional(),
    env: z.array(z.string()).optional(),
    mode: SkillDepsModeSchema.optional(),
  }),
);
export type SkillRequires = z.infer<typeof SkillRequiresSchema>;

/** ISO-8601 timestamp of the last change on disk. */
const UpdatedAtSchema = lazySchema("admin.skills", () => z.iso.datetime({ offset: true }));

export const SkillSummarySchema = lazySchema("admin.skills", () =>
  z.looseObject({
    name: SkillNameSchema,
    display_name: z.string().optional(),
    description: z.string().optional(),
    updated_at: UpdatedAtSchema,
  }),
);
export type SkillSummary = z.infer<typeof SkillSummarySchema>;

export const SkillRecordSchema = lazySchema("admin.skills", () =>
  SkillSummarySchema.extend({
    /** The markdown body without frontmatter. */
    body: z.string(),
    /** Cap on the characters injected into the prompt. */
    max_chars: z.number().int().positive().optional(),
    requires: SkillRequiresSchema.optional(),
  }),
);
export type SkillRecord = z.infer<typeof SkillRecordSchema>;

export const SkillsListParamsSchema = lazySchema("admin.skills", () =>
  z
    .looseObject({
      prefix: z.string().optional(),
      tenant_id: TenantIdSchema.optional(),
    })
    .optional(),
);
export type SkillsListParams = z.infer<typeof SkillsListParamsSchema>;

export const SkillsListResultSchema = lazySchema("admin.skills", () =>
  z.looseObject({ skills: z.array(SkillSummarySchema) }),
);
export type SkillsListResult = z.infer<typeof SkillsListResultSchema>;

export const SkillsGetParamsSchema = lazySchema("admin.skills", () =>
  z.looseObject({
    name: NonEmptyStringSchema,
    tenant_id: TenantIdSchema.optional(),
  }),
);
export type SkillsGetParams = z.infer<typeof SkillsGetParamsSchema>;

/** `skill: null` is "not found", not an error, so callers can probe. */
export const SkillsGetResultSchema = lazySchema("admin.skills", () =>
  z.looseObject({ skill: SkillRecordSchema.nullable() }),
);
export type SkillsGetResult = z.infer<typeof SkillsGetResultSchema>;

export const SkillsUpsertParamsSchema = lazySchema("admin.skills", () =>
  z.looseObject({
    name: SkillNameSchema,
    display_name: z.string().optional(),
    description: z.string().optional(),
    body: z.string().refine((b) => b.trim().length > 0, { message: "body must not be blank" }),
    max_chars: z.number().int().positive().optional(),
    requires: SkillRequiresSchema.optional(),
    tenant_id: TenantIdSchema.optional(),
  }),
);
export type SkillsUpsertParams = z.infer<typeof SkillsUpsertParamsSchema>;

export const SkillsUpsertResultSchema = lazySchema("admin.skills", () =>
  z.looseObject({
    skill: SkillRecordSchema,
    /** False when an existing skill was updated. */
    created: z.boolean(),
  }),
);
export type SkillsUpsertResult = z.infer<typeof SkillsUpsertResultSchema>;

export const SkillsDeleteParamsSchema = lazySchema("admin.skills", () =>
  z.looseObject({
    name: NonEmptyStringSchema,
    tenant_id: TenantIdSchema.optional(),
  }),
);
export type SkillsDeleteParams = z.infer<typeof SkillsDeleteParamsSchema>;

/** `deleted: false` when there was nothing to delete. */
export const SkillsDeleteResultSchema = lazySchema("admin.skills", () =>
  z.looseObject({ deleted: z.boolean() }),
);
export type SkillsDeleteResult = z.infer<typeof SkillsDeleteResultSchema>;
