/**
 * Every admin domain this daemon has. Adding one is a file in this folder (see ../domain.ts) and
 * one line here.
 */
import type { AdminDomainModule } from "../domain.js";
import { agentEventsDomain } from "./agent-events.js";
import { agentsDomain } from "./agents.js";
import { auditDomain } from "./audit.js";
import { authDomain } from "./auth.js";
import { channelsDomain } from "./channels.js";
import { credentialsDomain } from "./credentials.js";
import { dispatchDomain } from "./dispatch.js";
import { escalationsDomain } from "./escalations.js";
import { llmDomain } from "./llm.js";
import { llmProvidersDomain } from "./llm-providers.js";
import { mcpDomain } from "./mcp.js";
import { memoryDomain } from "./memory.js";
import { memorySnapshotsDomain } from "./memory-snapshots.js";
import { metaDomain } from "./meta.js";
import { microappsDomain } from "./microapps.js";
import { pairingDomain } from "./pairing.js";
import { pluginsDomain } from "./plugins.js";
import { processingDomain } from "./processing.js";
import { secretsDomain } from "./secrets.js";
import { skillsDomain } from "./skills.js";
import { tenantsDomain } from "./tenants.js";
import { whatsappDomain } from "./whatsapp.js";

export const ADMIN_DOMAIN_MODULES: readonly AdminDomainModule[] = [
  agentsDomain,
  metaDomain,
  llmProvidersDomain,
  channelsDomain,
  credentialsDomain,
  dispatchDomain,
  skillsDomain,
  tenantsDomain,
  mcpDomain,
  pluginsDomain,
  microappsDomain,
  auditDomain,
  llmDomain,
  memoryDomain,
  memorySnapshotsDomain,
  agentEventsDomain,
  secretsDomain,
  authDomain,
  pairingDomain,
  whatsappDomain,
  processingDomain,
  escalationsDomain,
];
