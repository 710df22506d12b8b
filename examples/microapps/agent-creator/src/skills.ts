/**
 * Skills (capability skills_crud, optional): markdown instructions the daemon loads into agents'
 * prompts, one `skills/<name>/SKILL.md` each.
 */
import type { Microapp } from "nexo-plugin-sdk/microapp";
import type { Settings } from "./settings.js";

const SKILL_NAME = { type: "string", description: "1-64 chars of a-z, 0-9 and '-'" };

export function defineSkillTools(app: Microapp<Settings>): void {
  app.tool({
    name: "agent_creator_list_skills",
    description: "List the skills",
    inputSchema: { type: "object", properties: {} },
    handler: async (_args, { admin }) => {
      const { skills } = await admin.skills.list();
      return { skills: skills.map(({ name, description }) => ({ name, description: description ?? "" })) };
    },
  });

  app.tool<{ name: string; description?: string; body: string }>({
    name: "agent_creator_add_skill",
    description: "Add a skill, or replace the text of an existing one",
    inputSchema: {
      type: "object",
      properties: {
        name: SKILL_NAME,
        description: { type: "string", description: "One line saying when the skill applies" },
        body: { type: "string", description: "The skill's instructions, in markdown" },
      },
      required: ["name", "body"],
    },
    handler: async (args, { admin }) => {
      const { skill, created } = await admin.skills.upsert({
        name: args.name,
        body: args.body,
        ...(args.description === undefined ? {} : { description: args.description }),
      });
      return { name: skill.name, created };
    },
  });

  app.tool<{ name: string }>({
    name: "agent_creator_delete_skill",
    description: "Delete a skill",
    inputSchema: { type: "object", properties: { name: SKILL_NAME }, required: ["name"] },
    handler: async (args, { admin }) => {
      const { deleted } = await admin.skills.delete({ name: args.name });
      return { deleted };
    },
  });
}
