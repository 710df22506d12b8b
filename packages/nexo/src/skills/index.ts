/** Skills: markdown instructions kept as `skills/<name>/SKILL.md` files. See docs/configuration.md. */
export { type PromptSkill, renderSkillsSection, SKILLS_HEADING } from "./prompt.js";
export {
  MAX_SKILL_FILE_BYTES,
  parseSkillFile,
  renderSkillFile,
  type SkillContent,
  SkillFileError,
} from "./skill-file.js";
export {
  checkSkillName,
  SKILL_FILE,
  type Skill,
  type SkillListing,
  type SkillListOptions,
  SkillNameError,
  SkillPathError,
  SkillStore,
  TENANTS_DIR,
} from "./store.js";
