/**
 * Skills (`skillsManagement`): the markdown instructions (`SKILL.md`) agents load into their
 * prompts. `skills/read` returns the file as stored; `skills/view` what agents get (the same text
 * where a server has no per-workspace variants).
 */
import { z } from "zod";
import { method } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";

export const SkillSourceSchema = lazySchema("appserver.skills", () =>
  z.enum(["workspace", "plugin", "builtin", "user"]),
);
export type SkillSource = z.infer<typeof SkillSourceSchema>;

export const SkillInfoSchema = lazySchema("appserver.skills", () =>
  z.looseObject({
    name: z.string().min(1),
    /** The front matter's description, or the name when it has none. */
    description: z.string(),
    displayName: z.string().optional(),
    source: SkillSourceSchema,
    /** false: the skill cannot be used as it is; `unavailableReason` says why. */
    available: z.boolean(),
    unavailableReason: z.string().nullable(),
    enabled: z.boolean(),
    /** The SKILL.md file. */
    path: z.string(),
    metadata: z.record(z.string(), z.unknown()),
  }),
);
export type SkillInfo = z.infer<typeof SkillInfoSchema>;

export const SkillsListParamsSchema = lazySchema("appserver.skills", () =>
  z.looseObject({
    /** Default true; false leaves out skills that cannot be used. */
    includeUnavailable: z.boolean().optional(),
  }),
);
export type SkillsListParams = z.infer<typeof SkillsListParamsSchema>;
export const SkillsListResultSchema = lazySchema("appserver.skills", () =>
  z.looseObject({ skills: z.array(SkillInfoSchema) }),
);
export type SkillsListResult = z.infer<typeof SkillsListResultSchema>;

export const SkillNameParamsSchema = lazySchema("appserver.skills", () =>
  z.looseObject({ name: z.string().min(1) }),
);
export type SkillNameParams = z.infer<typeof SkillNameParamsSchema>;

export const SkillsReadResultSchema = lazySchema("appserver.skills", () =>
  z.looseObject({
    name: z.string(),
    /** The whole SKILL.md, front matter included. */
    content: z.string(),
    metadata: z.record(z.string(), z.unknown()),
  }),
);
export type SkillsReadResult = z.infer<typeof SkillsReadResultSchema>;

export const SkillsViewResultSchema = lazySchema("appserver.skills", () =>
  z.looseObject({ name: z.string(), content: z.string() }),
);
export type SkillsViewResult = z.infer<typeof SkillsViewResultSchema>;

export const SkillsUninstallResultSchema = lazySchema("appserver.skills", () =>
  z.looseObject({
    name: z.string(),
    uninstalled: z.boolean(),
    source: SkillSourceSchema,
    removedSourcePath: z.string().nullable(),
    removedVariantCount: z.number().int().nonnegative(),
  }),
);
export type SkillsUninstallResult = z.infer<typeof SkillsUninstallResultSchema>;

export const SkillsSetEnabledParamsSchema = lazySchema("appserver.skills", () =>
  z.looseObject({ name: z.string().min(1), enabled: z.boolean() }),
);
export type SkillsSetEnabledParams = z.infer<typeof SkillsSetEnabledParamsSchema>;
export const SkillsSetEnabledResultSchema = lazySchema("appserver.skills", () =>
  z.looseObject({ skill: SkillInfoSchema }),
);
export type SkillsSetEnabledResult = z.infer<typeof SkillsSetEnabledResultSchema>;

export const skillsMethods = {
  "skills/list": method(SkillsListParamsSchema, SkillsListResultSchema),
  "skills/read": method(SkillNameParamsSchema, SkillsReadResultSchema),
  "skills/view": method(SkillNameParamsSchema, SkillsViewResultSchema),
  "skills/setEnabled": method(SkillsSetEnabledParamsSchema, SkillsSetEnabledResultSchema),
  "skills/uninstall": method(SkillNameParamsSchema, SkillsUninstallResultSchema),
} as const;
