/**
 * Every admin domain this daemon has. Adding one is a file in this folder (see ../domain.ts) and
 * one line here.
 */
import type { AdminDomainModule } from "../domain.js";
import { auditDomain } from "./audit.js";
import { authDomain } from "./auth.js";
import { llmDomain } from "./llm.js";
import { memoryDomain } from "./memory.js";
import { secretsDomain } from "./secrets.js";

export const ADMIN_DOMAIN_MODULES: readonly AdminDomainModule[] = [
  auditDomain,
  llmDomain,
  memoryDomain,
  secretsDomain,
  authDomain,
];
